package proxy

import (
	"context"
	"crypto/sha256"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/interceptors"
)

// Principal is the identity a client key stands for. The zero Principal is
// an unauthenticated caller (no client keys configured).
type Principal struct {
	// KeyID is the key's name (auth.api_keys[].name); "" when the caller
	// is unauthenticated. Routes match it (match.api_key).
	KeyID string
	// AgentID and Tenant are the identity of the key's requests.
	AgentID string
	Tenant  string
	// Models are routing globs (path.Match) the key may call; empty is any.
	Models []string
	// APIs are the APIs the key may use (config.KeyAPIs); empty is all.
	APIs []string
	// MCPServers are the MCP servers the key may reach; empty is all.
	MCPServers []string
	// ClientTurnPoints allows the key to send Agent-Hooks-Turn-Points:
	// client.
	ClientTurnPoints bool
	// RateLimit bounds the key's requests per fixed window; zero is none.
	RateLimit config.RateLimit
}

// authenticated reports whether p came from a client key.
func (p Principal) authenticated() bool { return p.KeyID != "" }

// KeyHash is the SHA-256 of a client key, the only form in which the
// gateway keeps keys.
type KeyHash = [32]byte

// rateCounters are the session store's fixed-window counters (see
// interceptors.Counters), shared by every replica on the store.
type rateCounters interface {
	ReserveCounter(ctx context.Context, key string, ttl time.Duration, n, limit int64) (int64, bool, error)
}

// principals maps the usable keys' hashes to their principals; revoked
// keys are kept apart, by name, so a refusal can say which key it was.
func principals(keys []config.APIKey) (map[KeyHash]Principal, map[KeyHash]string) {
	if len(keys) == 0 {
		return nil, nil
	}
	live := make(map[KeyHash]Principal, len(keys))
	var revoked map[KeyHash]string
	for _, k := range keys {
		if k.Revoked {
			if revoked == nil {
				revoked = make(map[KeyHash]string)
			}
			revoked[k.Hash] = k.Name
			continue
		}
		live[k.Hash] = Principal{
			KeyID: k.Name, AgentID: k.AgentID, Tenant: k.Tenant,
			Models: slices.Clone(k.Models), APIs: slices.Clone(k.APIs), MCPServers: slices.Clone(k.MCPServers),
			ClientTurnPoints: k.ClientTurnPoints, RateLimit: k.RateLimit,
		}
	}
	return live, revoked
}

// errInvalidKey is the one answer to a missing, unknown or revoked key, so
// a caller learns nothing about which keys exist.
func errInvalidKey() error {
	return errorf(http.StatusUnauthorized, typeAuth, "invalid_api_key", "a valid gateway API key is required (Authorization: Bearer <key>, or x-api-key)")
}

// authenticate maps the client's key to its principal when the policy
// requires keys; otherwise the caller is the zero Principal. The key comes
// as OpenAI clients send it (Authorization: Bearer) or as Anthropic
// clients do (x-api-key), and is looked up by its SHA-256.
func (s *Server) authenticate(r *http.Request, pol *Policy) (Principal, error) {
	if !pol.RequireKeys && len(pol.Principals) == 0 {
		return Principal{}, nil
	}
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || key == "" {
		key = r.Header.Get("X-Api-Key")
	}
	if key == "" {
		return Principal{}, errInvalidKey()
	}
	h := sha256.Sum256([]byte(key))
	if p, ok := pol.Principals[h]; ok {
		return p, nil
	}
	if name, ok := pol.revokedKeys[h]; ok {
		s.log.Info("revoked client key refused", "key", name)
	}
	return Principal{}, errInvalidKey()
}

// authorize checks what p's key allows: the API (a config.KeyAPIs name),
// the model ("" when the request names none) and the key's rate limit.
// The unauthenticated principal is allowed everything.
func (s *Server) authorize(ctx context.Context, p Principal, api string, model string) error {
	if p.KeyID == "" {
		return nil
	}
	if len(p.APIs) > 0 && !slices.Contains(p.APIs, api) {
		return errorf(http.StatusForbidden, typeAuth, "api_not_allowed", "this API key may not use the %s API (allowed: %s)", api, strings.Join(p.APIs, ", "))
	}
	if model != "" && !p.allowsModel(model) {
		// The model is not quoted: it is the client's text.
		return &apiError{status: http.StatusForbidden, typ: typeAuth, code: "model_not_allowed",
			message: "this API key may not call the requested model", param: "model"}
	}
	return s.rateLimit(ctx, p)
}

// allowsModel reports whether p's key may call model.
func (p Principal) allowsModel(model string) bool {
	return len(p.Models) == 0 || slices.ContainsFunc(p.Models, func(g string) bool {
		ok, _ := path.Match(g, model)
		return ok
	})
}

// rateLimit counts the request in the key's current fixed window, in the
// session store's counters so that every replica shares the count.
func (s *Server) rateLimit(ctx context.Context, p Principal) error {
	rl := p.RateLimit
	if rl.Requests <= 0 || rl.Window <= 0 {
		return nil
	}
	if s.opts.Counters == nil {
		return errorf(http.StatusServiceUnavailable, typeGatewayError, "rate_limit_unavailable", "the key's rate limit cannot be counted: the session store keeps no counters")
	}
	now := time.Now()
	window := now.UnixNano() / int64(rl.Window)
	key := "ratelimit:" + p.KeyID + ":" + strconv.FormatInt(int64(rl.Window/time.Millisecond), 10) + ":" + strconv.FormatInt(window, 10)
	_, ok, err := s.opts.Counters.ReserveCounter(ctx, key, rl.Window, 1, rl.Requests)
	if err != nil {
		s.log.Warn("rate limit counter failed", "key", p.KeyID, "error", err)
		return errorf(http.StatusServiceUnavailable, typeGatewayError, "rate_limit_unavailable", "the key's rate limit could not be counted")
	}
	if ok {
		return nil
	}
	reset := time.Unix(0, (window+1)*int64(rl.Window))
	e := errorf(http.StatusTooManyRequests, typeAuth, "rate_limited",
		"this API key's rate limit of %d requests per %s is reached; retry when the window resets", rl.Requests, interceptors.ShortDuration(rl.Window))
	e.retryAfter = reset.Sub(now)
	return e
}
