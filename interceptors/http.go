package interceptors

import (
	"context"
	"fmt"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// httpInterceptor asks a remote verdict service: it POSTs the context and
// takes the answer as the verdict (docs/remote-interceptors.md). It does
// I/O, so it is not NonBlocking: the engine's timeout bounds it too.
type httpInterceptor struct {
	client *remoteClient
	url    string
}

// newHTTP builds the "http" type.
func newHTTP(spec config.Interceptor, env Env) (enforcement.Interceptor, error) {
	var opts remoteOptions
	if err := spec.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	c, ps := newRemoteClient(spec, env, opts)
	if len(ps) > 0 {
		return nil, problemsError(ps...)
	}
	return &httpInterceptor{client: c, url: opts.URL}, nil
}

// Intercept implements enforcement.Interceptor.
func (h *httpInterceptor) Intercept(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	body, err := jsonvalue.Marshal(map[string]any(c))
	if err != nil {
		return enforcement.Verdict{}, fmt.Errorf("http interceptor: encode context: %w", err)
	}
	data, err := h.client.post(ctx, h.url, body)
	if err != nil {
		return enforcement.Verdict{}, fmt.Errorf("http interceptor: %w", err)
	}
	tree, err := enforcement.DecodeAnswer(data)
	if err != nil {
		return enforcement.Verdict{}, fmt.Errorf("http interceptor: %w", err)
	}
	v, err := enforcement.ParseVerdictStrict(tree)
	if err != nil {
		return enforcement.Verdict{}, fmt.Errorf("http interceptor: %w", err)
	}
	return v, nil
}
