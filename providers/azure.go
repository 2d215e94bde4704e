package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// AzureConfig configures an Azure OpenAI upstream.
type AzureConfig struct {
	// Name identifies the upstream; default "azure".
	Name string
	// Endpoint is the resource URL, e.g. https://<resource>.openai.azure.com.
	Endpoint string
	// APIKey is sent in the api-key header; required.
	APIKey string
	// APIVersion is the api-version query parameter; required.
	APIVersion string
	// Deployments maps a request's model name to its deployment; a model
	// without an entry uses a deployment of the same name. Its keys are
	// advertised by Models along with the literal Models patterns.
	Deployments map[string]string
	// Timeout bounds the whole request including reading the body;
	// 0 means no bound besides the caller's ctx.
	Timeout time.Duration
	// ConnectTimeout bounds dialing and the TLS handshake; 0 means 30s.
	ConnectTimeout time.Duration
	// Models are the model patterns this upstream serves.
	Models []string
	// Transport replaces the tuned transport (tests).
	Transport http.RoundTripper
}

// Azure is an Azure OpenAI upstream: the deployment is chosen from the
// body's model and the key travels in the api-key header. Chat completions
// go to the deployment's URL; responses go to the v1 API, which takes the
// deployment name as the body's model.
type Azure struct {
	http        *httpClient
	prefix      string // {Endpoint}/openai/deployments/
	suffix      string // /chat/completions?api-version=…
	responses   string // {Endpoint}/openai/v1/responses
	apiKey      string
	deployments map[string]string
	models      []string
}

var _ Upstream = (*Azure)(nil)

// NewAzure validates cfg and returns the upstream.
func NewAzure(cfg AzureConfig) (*Azure, error) {
	name := cfg.Name
	if name == "" {
		name = "azure"
	}
	a, err := newAzure(name, cfg)
	if err != nil {
		return nil, fmt.Errorf("providers: azure upstream %q: %w", name, err)
	}
	return a, nil
}

func newAzure(name string, cfg AzureConfig) (*Azure, error) {
	if cfg.Endpoint == "" {
		return nil, errors.New("endpoint is required")
	}
	base, err := endpointURL(cfg.Endpoint, "openai/deployments")
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	if u, _ := url.Parse(base); u.RawQuery != "" {
		return nil, errors.New("endpoint must not have a query")
	}
	responses, err := endpointURL(cfg.Endpoint, "openai/v1/responses")
	if err != nil {
		return nil, fmt.Errorf("endpoint: %w", err)
	}
	if cfg.APIVersion == "" {
		return nil, errors.New("api version is required")
	}
	if cfg.APIKey == "" {
		return nil, errors.New("api key is required")
	}
	if !validHeaderValue(cfg.APIKey) {
		return nil, errors.New("api key contains control characters")
	}
	deployments := make(map[string]string, len(cfg.Deployments))
	for model, dep := range cfg.Deployments {
		if model == "" || !validDeployment(dep) {
			return nil, fmt.Errorf("deployment %q for model %q is invalid", dep, model)
		}
		deployments[model] = dep
	}
	if err := validatePatterns(cfg.Models); err != nil {
		return nil, err
	}
	c, err := newHTTPClient(name, cfg.Timeout, cfg.ConnectTimeout, cfg.Transport,
		// OpenAI-Organization and -Project name OpenAI accounts; Azure has
		// no use for them.
		[]string{"Traceparent", "Tracestate"})
	if err != nil {
		return nil, err
	}
	models := slices.Clone(cfg.Models)
	for model := range deployments {
		models = append(models, model)
	}
	models = literalModels(models)
	slices.Sort(models)
	return &Azure{
		http:        c,
		prefix:      base + "/",
		suffix:      "/chat/completions?" + url.Values{"api-version": {cfg.APIVersion}}.Encode(),
		responses:   responses,
		apiKey:      cfg.APIKey,
		deployments: deployments,
		models:      models,
	}, nil
}

// Name returns the upstream's name.
func (a *Azure) Name() string { return a.http.name }

// Models returns the literal model names configured for the upstream and
// the models named in its deployment map, sorted.
func (a *Azure) Models() []string { return slices.Clone(a.models) }

// Serves reports whether op is chat completions or responses.
func (a *Azure) Serves(op wire.Operation) bool {
	return op == wire.OpChatCompletions || op == wire.OpResponses
}

// Send posts body to the deployment serving the body's model: chat
// completions to {Endpoint}/openai/deployments/{deployment}/chat/completions
// ?api-version=…; responses to {Endpoint}/openai/v1/responses, with the
// body's model replaced by its deployment when Deployments maps it (the
// only change made to the body). A body without a usable model fails with
// an error wrapping ErrInvalidRequest.
func (a *Azure) Send(ctx context.Context, op wire.Operation, body []byte, clientHeader http.Header) (*http.Response, error) {
	if !a.Serves(op) {
		return nil, a.http.errorf("%w", ErrUnsupported)
	}
	info, err := scanRequest(body)
	if err != nil {
		return nil, a.http.errorf("%w", err)
	}
	if info.Model == "" {
		return nil, a.http.errorf("%w: body has no model", ErrInvalidRequest)
	}
	dep, mapped := a.deployments[info.Model]
	if !mapped {
		dep = info.Model
	}
	if !validDeployment(dep) {
		return nil, a.http.errorf("%w: model is not a valid deployment name", ErrInvalidRequest)
	}
	h := a.http.header(clientHeader, func() bool { return info.Stream })
	h.Set("Api-Key", a.apiKey)
	if op == wire.OpChatCompletions {
		return a.http.post(ctx, a.prefix+url.PathEscape(dep)+a.suffix, body, h)
	}
	if mapped && dep != info.Model {
		if body, err = replaceModel(body, dep); err != nil {
			return nil, a.http.errorf("%w", err)
		}
	}
	return a.http.post(ctx, a.responses, body, h)
}

// replaceModel returns body with its top-level model member's value set
// to model, every other byte kept.
func replaceModel(body []byte, model string) ([]byte, error) {
	root := rawjson.RootSpan(body)
	if root.Start >= len(body) || root.Kind(body) != '{' {
		return nil, fmt.Errorf("%w: body is not an object", ErrInvalidRequest)
	}
	ms, err := rawjson.ScanObject(body, root)
	if err != nil {
		return nil, fmt.Errorf("%w: body has duplicate members", ErrInvalidRequest)
	}
	i := rawjson.Find(ms, "model")
	if i < 0 {
		return nil, fmt.Errorf("%w: body has no model", ErrInvalidRequest)
	}
	quoted, err := json.Marshal(model)
	if err != nil {
		return nil, err
	}
	return rawjson.Splice(body, ms[i].Val, quoted), nil
}

// CloseIdleConnections closes idle upstream connections; call it when a
// configuration reload retires the upstream.
func (a *Azure) CloseIdleConnections() { a.http.closeIdle() }

// validDeployment rejects names that would not stay one path segment.
func validDeployment(dep string) bool {
	return dep != "" && dep != "." && dep != ".."
}
