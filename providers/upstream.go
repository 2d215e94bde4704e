package providers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Upstream sends model requests to one model provider.
type Upstream interface {
	// Name identifies the upstream in errors, logs and metrics.
	Name() string
	// Serves reports whether the upstream speaks op.
	Serves(op wire.Operation) bool
	// Send posts body (a request of op's wire format, already verdicted)
	// to the upstream's endpoint for op and returns the upstream response
	// untouched, whatever its status; the caller reads and closes Body
	// (reading it to EOF lets the connection be reused). Cancelling ctx
	// (client disconnect) aborts the upstream request, including the
	// reading of Body. clientHeader carries the client's request headers;
	// only the few listed in the package documentation are forwarded. An
	// op the upstream does not serve fails with ErrUnsupported.
	Send(ctx context.Context, op wire.Operation, body []byte, clientHeader http.Header) (*http.Response, error)
	// Models lists the model ids this upstream advertises at
	// GET /v1/models: its configured patterns that contain no wildcard.
	// It may be empty.
	Models() []string
}

// ErrInvalidRequest is wrapped by Send errors caused by the request
// body itself (for example an Azure request without a model), so the proxy
// can answer 400 rather than blame the upstream.
var ErrInvalidRequest = errors.New("invalid request")

// ErrUnsupported is wrapped by Send errors for an operation the upstream
// does not serve; the router never picks such an upstream.
var ErrUnsupported = errors.New("operation not served by this upstream")

const userAgent = "hooks-gateway"

// errNotRequestObject is scanRequest's one error.
var errNotRequestObject = fmt.Errorf("%w: body is not a JSON request object", ErrInvalidRequest)

// requestInfo is the little the adapters need to know about a body.
type requestInfo struct {
	Model  string
	Stream bool
}

// scanRequest reads the model and stream flag from body, a JSON object
// (the verdicted request the gateway wrote), without decoding the rest:
// one validating scan of the top level, as strict as encoding/json (keys
// compared exactly, a repeated key refused). A member of the wrong type
// is an error, as it is to encoding/json; null is its absence. The error
// never quotes the body.
func scanRequest(body []byte) (requestInfo, error) {
	var info requestInfo
	_, ms, ok := rawjson.ScanRootValid(body)
	if !ok {
		return requestInfo{}, errNotRequestObject
	}
	if i := rawjson.Find(ms, "model"); i >= 0 {
		switch tok := body[ms[i].Val.Start:ms[i].Val.End]; {
		case string(tok) == "null":
		case tok[0] == '"':
			m, err := rawjson.DecodeKey(tok)
			if err != nil {
				return requestInfo{}, errNotRequestObject
			}
			info.Model = m
		default:
			return requestInfo{}, errNotRequestObject
		}
	}
	if i := rawjson.Find(ms, "stream"); i >= 0 {
		switch string(body[ms[i].Val.Start:ms[i].Val.End]) {
		case "true":
			info.Stream = true
		case "false", "null":
		default:
			return requestInfo{}, errNotRequestObject
		}
	}
	return info, nil
}

// upstreamHeader builds the outgoing headers: the fixed ones, Accept (the
// client's, else chosen by stream, consulted only then), and the client
// headers listed in forward (canonical keys). Everything else the client
// sent (cookies, the gateway's own Agent-Hooks-* headers, its key unless
// pass-through is configured) stays at the gateway.
func upstreamHeader(client http.Header, forward []string, stream func() bool) http.Header {
	h := make(http.Header, 8)
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", userAgent)
	if accept := client.Values("Accept"); len(accept) > 0 {
		h["Accept"] = slices.Clone(accept)
	} else if stream() {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	for _, k := range forward {
		if v := client.Values(k); len(v) > 0 {
			h[k] = slices.Clone(v)
		}
	}
	return h
}

// httpClient is the HTTP plumbing shared by the OpenAI and Azure adapters.
type httpClient struct {
	name    string
	client  *http.Client
	forward []string // client headers passed through, canonical keys
}

// header builds the outgoing headers; see upstreamHeader.
func (c *httpClient) header(client http.Header, stream func() bool) http.Header {
	return upstreamHeader(client, c.forward, stream)
}

// post sends body to url with header h.
func (c *httpClient) post(ctx context.Context, url string, body []byte, h http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, c.errorf("build request: %w", err)
	}
	req.Header = h
	resp, err := c.client.Do(req)
	if err != nil {
		// err names method, URL (password stripped) and cause; never the key.
		return nil, c.errorf("%w", err)
	}
	return resp, nil
}

func (c *httpClient) errorf(format string, args ...any) error {
	return fmt.Errorf("providers: %s: "+format, append([]any{c.name}, args...)...)
}

// validatePatterns reports the first malformed model pattern.
func validatePatterns(patterns []string) error {
	for _, p := range patterns {
		if p == "" {
			return errors.New("empty model pattern")
		}
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("model pattern %q: %w", p, err)
		}
	}
	return nil
}

// isLiteral reports whether pattern names exactly one model.
func isLiteral(pattern string) bool {
	return !strings.ContainsAny(pattern, `*?[\`)
}

// literalModels returns the patterns that name one model, in order,
// without duplicates.
func literalModels(patterns []string) []string {
	out := make([]string, 0, len(patterns))
	for _, p := range patterns {
		if isLiteral(p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// validHeaderValue rejects keys that net/http would refuse on every
// request, so the mistake surfaces at configuration time.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
