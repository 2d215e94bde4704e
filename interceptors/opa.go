package interceptors

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// opaDenied is the reason of a deny from a boolean OPA decision.
const opaDenied = "policy:opa_denied"

// opaOptions configures the "opa" type: the remote keys plus the decision's
// path and the reason of a boolean deny.
type opaOptions struct {
	URL            string            `yaml:"url"`
	Timeout        time.Duration     `yaml:"timeout"`
	Retries        *int              `yaml:"retries"`
	BearerTokenEnv string            `yaml:"bearer_token_env"`
	TLS            *remoteTLSOptions `yaml:"tls"`
	Headers        map[string]string `yaml:"headers"`
	// Path is the decision's document path under /v1/data, such as
	// agenthooks/decision.
	Path   string `yaml:"path"`
	Reason string `yaml:"reason"`
}

// opaPathPattern keeps the path to slash-separated package and rule names.
var opaPathPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$`)

// opaInterceptor queries OPA's data API with the context as input.
type opaInterceptor struct {
	client  *remoteClient
	url     string
	reason  string
	message string
}

// newOPA builds the "opa" type.
func newOPA(spec config.Interceptor, env Env) (enforcement.Interceptor, error) {
	opts := opaOptions{Reason: opaDenied}
	if err := spec.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	c, ps := newRemoteClient(spec, env, remoteOptions{
		URL: opts.URL, Timeout: opts.Timeout, Retries: opts.Retries,
		BearerTokenEnv: opts.BearerTokenEnv, TLS: opts.TLS, Headers: opts.Headers,
	})
	path := strings.Trim(opts.Path, "/")
	switch {
	case opts.Path == "":
		ps = append(ps, spec.Problemf("path", "is required, such as agenthooks/decision"))
	case !opaPathPattern.MatchString(path):
		ps = append(ps, spec.Problemf("path", "must be rule names separated by /, such as agenthooks/decision (got %q)", opts.Path))
	}
	ps = append(ps, checkReason(spec, opts.Reason)...)
	if len(ps) > 0 {
		return nil, problemsError(ps...)
	}
	target, err := url.JoinPath(opts.URL, "v1", "data", path)
	if err != nil {
		return nil, fmt.Errorf("opa: data URL: %w", err)
	}
	return &opaInterceptor{
		client: c, url: target, reason: opts.Reason,
		message: "denied by OPA decision " + path,
	}, nil
}

// Intercept implements enforcement.Interceptor. OPA's result maps as:
// true → allow; false → deny; an object → a verdict; missing (the rule
// is undefined for this input) or anything else → an error, since an
// undefined decision is not an allow. The answer is read strictly
// (enforcement.DecodeAnswer): a member named twice anywhere is an invalid
// verdict. OPA's own envelope members (decision_id, metrics, …) are
// accepted; a verdict object in result is closed (ParseVerdictStrict).
func (o *opaInterceptor) Intercept(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	body, err := jsonvalue.Marshal(map[string]any{"input": map[string]any(c)})
	if err != nil {
		return enforcement.Verdict{}, fmt.Errorf("opa: encode input: %w", err)
	}
	data, err := o.client.post(ctx, o.url, body)
	if err != nil {
		return enforcement.Verdict{}, fmt.Errorf("opa: %w", err)
	}
	tree, err := enforcement.DecodeAnswer(data)
	if err != nil {
		return enforcement.Verdict{}, fmt.Errorf("opa: %w", err)
	}
	doc, _ := tree.(map[string]any)
	result, ok := doc["result"]
	if !ok {
		return enforcement.Verdict{}, fmt.Errorf("opa: the decision is undefined for this input (no result)")
	}
	switch r := result.(type) {
	case bool:
		if r {
			return enforcement.Allow(), nil
		}
		return enforcement.Deny(o.reason, o.message), nil
	case map[string]any:
		v, err := enforcement.ParseVerdictStrict(r)
		if err != nil {
			return enforcement.Verdict{}, fmt.Errorf("opa: result: %w", err)
		}
		return v, nil
	}
	return enforcement.Verdict{}, fmt.Errorf("opa: result is %s, not a boolean or a verdict object", jsonKind(result))
}

// jsonKind names a JSON value's type for errors, without its content.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case bool:
		return "a boolean"
	}
	return "a number"
}
