package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// DefaultOpenAIBaseURL is the base URL used when OpenAIConfig.BaseURL is empty.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAIConfig configures an OpenAI-compatible upstream.
type OpenAIConfig struct {
	// Name identifies the upstream; default "openai".
	Name string
	// BaseURL is the API root; requests go to {BaseURL}/chat/completions.
	// Default DefaultOpenAIBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>". Empty sends no
	// Authorization (local vLLM, Ollama).
	APIKey string
	// PassClientKey forwards the client's Authorization header instead of
	// APIKey; APIKey, if set, then serves only clients that sent none.
	PassClientKey bool
	// Timeout bounds the whole request including reading the body;
	// 0 means no bound besides the caller's ctx.
	Timeout time.Duration
	// ConnectTimeout bounds dialing and the TLS handshake; 0 means 30s.
	ConnectTimeout time.Duration
	// Models are the model patterns this upstream serves; the literal ones
	// are advertised by Models.
	Models []string
	// Transport replaces the tuned transport (tests).
	Transport http.RoundTripper
}

// OpenAI is an upstream speaking the OpenAI chat-completions API: OpenAI
// itself or any compatible server (vLLM, Ollama, LiteLLM, …).
type OpenAI struct {
	http          *httpClient
	endpoints     map[wire.Operation]string
	auth          string // "Bearer <key>", or empty
	passClientKey bool
	models        []string
}

var _ Upstream = (*OpenAI)(nil)

// NewOpenAI validates cfg and returns the upstream.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	name := cfg.Name
	if name == "" {
		name = "openai"
	}
	o, err := newOpenAI(name, cfg)
	if err != nil {
		return nil, fmt.Errorf("providers: openai upstream %q: %w", name, err)
	}
	return o, nil
}

func newOpenAI(name string, cfg OpenAIConfig) (*OpenAI, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	endpoints := make(map[wire.Operation]string, 2)
	for op, rel := range map[wire.Operation]string{wire.OpChatCompletions: "chat/completions", wire.OpResponses: "responses"} {
		u, err := endpointURL(base, rel)
		if err != nil {
			return nil, fmt.Errorf("base URL: %w", err)
		}
		endpoints[op] = u
	}
	if !validHeaderValue(cfg.APIKey) {
		return nil, errors.New("api key contains control characters")
	}
	if err := validatePatterns(cfg.Models); err != nil {
		return nil, err
	}
	c, err := newHTTPClient(name, cfg.Timeout, cfg.ConnectTimeout, cfg.Transport,
		[]string{"Traceparent", "Tracestate"})
	if err != nil {
		return nil, err
	}
	o := &OpenAI{http: c, endpoints: endpoints, passClientKey: cfg.PassClientKey, models: literalModels(cfg.Models)}
	if cfg.APIKey != "" {
		o.auth = "Bearer " + cfg.APIKey
	}
	return o, nil
}

// Name returns the upstream's name.
func (o *OpenAI) Name() string { return o.http.name }

// Models returns the literal model names configured for the upstream.
func (o *OpenAI) Models() []string { return slices.Clone(o.models) }

// Serves reports whether op is chat completions or responses.
func (o *OpenAI) Serves(op wire.Operation) bool { return o.endpoints[op] != "" }

// Send posts body to {BaseURL}/chat/completions or {BaseURL}/responses.
func (o *OpenAI) Send(ctx context.Context, op wire.Operation, body []byte, clientHeader http.Header) (*http.Response, error) {
	endpoint := o.endpoints[op]
	if endpoint == "" {
		return nil, o.http.errorf("%w", ErrUnsupported)
	}
	h := o.http.header(clientHeader, func() bool {
		info, err := scanRequest(body)
		return err == nil && info.Stream
	})
	if auth := clientHeader.Values("Authorization"); o.passClientKey && len(auth) > 0 {
		h["Authorization"] = slices.Clone(auth)
		// The organization and project name the client's own account:
		// only with its own key. With the operator's key they would let a
		// client bill another of the operator's projects.
		for _, k := range []string{"Openai-Organization", "Openai-Project"} {
			if v := clientHeader.Values(k); len(v) > 0 {
				h[k] = slices.Clone(v)
			}
		}
	} else if o.auth != "" {
		h.Set("Authorization", o.auth)
	}
	return o.http.post(ctx, endpoint, body, h)
}

// CloseIdleConnections closes idle upstream connections; call it when a
// configuration reload retires the upstream.
func (o *OpenAI) CloseIdleConnections() { o.http.closeIdle() }

// endpointURL validates an absolute http(s) base URL and appends rel to its
// path, keeping any query.
func endpointURL(base, rel string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		// url.Parse quotes the whole input, which may hold a password.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return "", fmt.Errorf("invalid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute http(s) URL", u.Redacted())
	}
	if u.Fragment != "" {
		return "", fmt.Errorf("%q has a fragment", u.Redacted())
	}
	return u.JoinPath(rel).String(), nil
}
