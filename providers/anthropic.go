package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	messageswire "github.com/hooks-gateway/hooks-gateway/internal/wire/messages"
)

// DefaultAnthropicBaseURL is the base URL used when AnthropicConfig.BaseURL
// is empty. Like Anthropic's SDKs, the base excludes /v1.
const DefaultAnthropicBaseURL = "https://api.anthropic.com"

// DefaultAnthropicVersion is the anthropic-version header sent when neither
// the configuration nor the client names one.
const DefaultAnthropicVersion = "2023-06-01"

// AnthropicConfig configures an Anthropic Messages API upstream.
type AnthropicConfig struct {
	// Name identifies the upstream; default "anthropic".
	Name string
	// BaseURL is the API root without /v1 (as Anthropic's SDKs take it);
	// requests go to {BaseURL}/v1/messages and
	// {BaseURL}/v1/messages/count_tokens. Default DefaultAnthropicBaseURL.
	BaseURL string
	// APIKey is sent in the x-api-key header. Empty sends none.
	APIKey string
	// Version is the anthropic-version header sent when the client sent
	// none; default DefaultAnthropicVersion.
	Version string
	// PassClientKey forwards the client's key as x-api-key: its x-api-key
	// header, else the token of its "Authorization: Bearer" header. APIKey,
	// if set, then serves only clients that sent neither.
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

// Anthropic is an upstream speaking Anthropic's Messages API.
type Anthropic struct {
	http          *httpClient
	endpoints     map[wire.Operation]string
	apiKey        string
	version       string
	passClientKey bool
	models        []string
}

var _ Upstream = (*Anthropic)(nil)

// NewAnthropic validates cfg and returns the upstream.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	name := cfg.Name
	if name == "" {
		name = "anthropic"
	}
	a, err := newAnthropic(name, cfg)
	if err != nil {
		return nil, fmt.Errorf("providers: anthropic upstream %q: %w", name, err)
	}
	return a, nil
}

func newAnthropic(name string, cfg AnthropicConfig) (*Anthropic, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultAnthropicBaseURL
	}
	endpoints := make(map[wire.Operation]string, 2)
	for op, rel := range map[wire.Operation]string{wire.OpMessages: "v1/messages", wire.OpCountTokens: "v1/messages/count_tokens"} {
		u, err := endpointURL(base, rel)
		if err != nil {
			return nil, fmt.Errorf("base URL: %w", err)
		}
		endpoints[op] = u
	}
	version := cfg.Version
	if version == "" {
		version = DefaultAnthropicVersion
	}
	switch {
	case !validHeaderValue(cfg.APIKey):
		return nil, errors.New("api key contains control characters")
	case !validHeaderValue(version):
		return nil, errors.New("anthropic version contains control characters")
	}
	if err := validatePatterns(cfg.Models); err != nil {
		return nil, err
	}
	c, err := newHTTPClient(name, cfg.Timeout, cfg.ConnectTimeout, cfg.Transport,
		[]string{"Traceparent", "Tracestate"})
	if err != nil {
		return nil, err
	}
	return &Anthropic{
		http: c, endpoints: endpoints, apiKey: cfg.APIKey, version: version,
		passClientKey: cfg.PassClientKey, models: literalModels(cfg.Models),
	}, nil
}

// Name returns the upstream's name.
func (a *Anthropic) Name() string { return a.http.name }

// Models returns the literal model names configured for the upstream.
func (a *Anthropic) Models() []string { return slices.Clone(a.models) }

// Serves reports whether op is messages or messages count_tokens.
func (a *Anthropic) Serves(op wire.Operation) bool { return a.endpoints[op] != "" }

// Send posts body to {BaseURL}/v1/messages or
// {BaseURL}/v1/messages/count_tokens with the key in x-api-key, the
// client's anthropic-version (else the configured one) and its
// anthropic-beta betas as the Messages surface judged them
// (messages.BetaHeader, joined by commas).
func (a *Anthropic) Send(ctx context.Context, op wire.Operation, body []byte, clientHeader http.Header) (*http.Response, error) {
	endpoint := a.endpoints[op]
	if endpoint == "" {
		return nil, a.http.errorf("%w", ErrUnsupported)
	}
	h := a.http.header(clientHeader, func() bool {
		info, err := scanRequest(body)
		return op == wire.OpMessages && err == nil && info.Stream
	})
	// The betas are sent as the gateway judged them (model.params.
	// anthropic_beta), nothing beside them.
	if betas := messageswire.BetaHeader(clientHeader.Values(messageswire.BetaHeaderName)); len(betas) > 0 {
		h.Set(messageswire.BetaHeaderName, strings.Join(betas, ","))
	} else {
		h.Del(messageswire.BetaHeaderName)
	}
	if v := clientHeader.Values(messageswire.VersionHeaderName); len(v) > 0 {
		h[messageswire.VersionHeaderName] = slices.Clone(v)
	} else {
		h.Set(messageswire.VersionHeaderName, a.version)
	}
	if key := a.clientKey(clientHeader); key != "" {
		h.Set("X-Api-Key", key)
	} else if a.apiKey != "" {
		h.Set("X-Api-Key", a.apiKey)
	}
	return a.http.post(ctx, endpoint, body, h)
}

// clientKey is the key the client brought when pass-through is on: its
// x-api-key, else its bearer token; "" otherwise.
func (a *Anthropic) clientKey(h http.Header) string {
	if !a.passClientKey {
		return ""
	}
	if key := h.Get("X-Api-Key"); key != "" {
		return key
	}
	auth := h.Get("Authorization")
	if scheme, token, ok := strings.Cut(auth, " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	return ""
}

// CloseIdleConnections closes idle upstream connections; call it when a
// configuration reload retires the upstream.
func (a *Anthropic) CloseIdleConnections() { a.http.closeIdle() }
