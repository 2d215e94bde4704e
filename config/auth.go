package config

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Client authentication modes (auth.mode).
const (
	// AuthKeys requires every client request to carry one of the
	// configured keys; the key is the caller's identity.
	AuthKeys = "keys"
	// AuthNone is the operator saying explicitly that clients are not
	// authenticated.
	AuthNone = "none"
)

// The APIs a key may be allowed (auth.api_keys[].apis): the three model
// surfaces, the emit API, the session end endpoint, and the MCP routes.
const (
	APIChatCompletions = "chat_completions"
	APIResponses       = "responses"
	APIMessages        = "messages"
	APIEmit            = "emit"
	APISessions        = "sessions"
	APIMCP             = "mcp"
)

// KeyAPIs lists the values auth.api_keys[].apis accepts.
var KeyAPIs = []string{APIChatCompletions, APIResponses, APIMessages, APIEmit, APISessions, APIMCP}

// minRateWindow is the shortest rate-limit window: Retry-After counts whole
// seconds.
const minRateWindow = time.Second

var (
	// keyNamePattern keeps key names payload-free; it admits key_env names
	// (TEAM_A_KEY), which are the default names of legacy entries.
	keyNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	sha256Pattern  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Auth configures client and admin authentication.
type Auth struct {
	// Mode is AuthKeys, AuthNone or "" (no keys and no explicit choice).
	// It defaults to AuthKeys when api_keys or keys_file is set.
	Mode string
	// APIKeys are the keys written in the main file.
	APIKeys []APIKey
	// KeysFile is a YAML file "keys: [...]" of more keys (sha256 only),
	// read at load and again on every policy reload.
	KeysFile string
	// FileKeys are KeysFile's keys as last read.
	FileKeys []APIKey
	// AdminTokenEnv names the variable holding the admin token; AdminToken
	// is its value.
	AdminTokenEnv string
	AdminToken    string
}

// APIKey is one client key and the identity it stands for. The key itself
// is never kept: only its SHA-256.
type APIKey struct {
	// Name identifies the key in logs, records and policy routes
	// (match.api_key); unique, payload-free. Defaults to KeyEnv.
	Name string
	// SHA256 is the key's SHA-256 as written (64 lowercase hex digits);
	// KeyEnv (legacy) names a variable holding the key itself. Exactly one
	// is set.
	SHA256 string
	KeyEnv string
	// Hash is the key's SHA-256, resolved at load from SHA256 or from the
	// key in KeyEnv.
	Hash [32]byte
	// Tenant and AgentID are the identity of requests carrying the key;
	// AgentID defaults to Name.
	Tenant  string
	AgentID string
	// Models are routing globs (path.Match) the key may call; empty is any.
	Models []string
	// APIs are the APIs (KeyAPIs) the key may use; empty is all.
	APIs []string
	// MCPServers are the MCP servers (mcp.servers[].name) the key may
	// reach; empty is every one.
	MCPServers []string
	// ClientTurnPoints allows the key to send Agent-Hooks-Turn-Points:
	// client.
	ClientTurnPoints bool
	// RateLimit bounds the key's requests per fixed window (zero: none).
	RateLimit RateLimit
	// Revoked keys authenticate nobody; the entry keeps the name known.
	Revoked bool

	// hashed reports that Hash holds a key's hash (a valid SHA256, or a
	// KeyEnv that was set at load).
	hashed bool
}

// RateLimit is a fixed-window request limit.
type RateLimit struct {
	Requests int64
	Window   time.Duration
}

// Keys returns every client key: the main file's, then the key file's as
// last read.
func (a Auth) Keys() []APIKey {
	return append(slices.Clip(a.APIKeys), a.FileKeys...)
}

// RequiresKeys reports whether client requests must carry a key.
func (a Auth) RequiresKeys() bool { return a.Mode == AuthKeys }

// Version identifies the key set (names, hashes and every attribute), so a
// reload can tell whether the keys changed.
func (a Auth) Version() string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(a.Mode)
	for _, k := range a.Keys() {
		field(k.Name)
		field(string(k.Hash[:]))
		field(k.Tenant)
		field(k.AgentID)
		field(fmt.Sprint(k.Models, k.APIs, k.MCPServers, k.ClientTurnPoints, k.RateLimit.Requests, int64(k.RateLimit.Window), k.Revoked))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ReloadKeys re-reads the key file and returns a copy of a holding its
// keys now. Problems (file:line) come back as an *Error and a is left as
// it was, so a broken key file keeps the keys in effect.
func (a Auth) ReloadKeys() (Auth, error) {
	if a.KeysFile == "" {
		return a, nil
	}
	keys, ps := readKeysFile(a.KeysFile, a.APIKeys)
	if err := ps.err(); err != nil {
		return a, err
	}
	a.FileKeys = keys
	return a, nil
}

func (d *decoder) auth(n *yaml.Node, field string, a *Auth) {
	d.mapping(n, field, map[string]handler{
		"mode": func(f string, v *yaml.Node) { a.Mode = d.str(v, f) },
		"api_keys": func(f string, v *yaml.Node) {
			d.sequence(v, f, func(f string, i int, v *yaml.Node) {
				a.APIKeys = append(a.APIKeys, d.apiKey(v, f, true))
			})
		},
		"keys_file":       func(f string, v *yaml.Node) { a.KeysFile = d.str(v, f) },
		"admin_token_env": func(f string, v *yaml.Node) { a.AdminTokenEnv = d.str(v, f) },
	})
	if a.Mode == "" && (len(a.APIKeys) > 0 || a.KeysFile != "") {
		if _, set := d.lines[join(field, "mode")]; !set {
			a.Mode = AuthKeys
		}
	}
}

// apiKey decodes one key entry; withEnv admits key_env (the main file
// only: a key file holds hashes).
func (d *decoder) apiKey(n *yaml.Node, field string, withEnv bool) APIKey {
	var k APIKey
	keys := map[string]handler{
		"name":               func(f string, v *yaml.Node) { k.Name = d.str(v, f) },
		"sha256":             func(f string, v *yaml.Node) { k.SHA256 = d.str(v, f) },
		"tenant":             func(f string, v *yaml.Node) { k.Tenant = d.str(v, f) },
		"agent_id":           func(f string, v *yaml.Node) { k.AgentID = d.str(v, f) },
		"models":             func(f string, v *yaml.Node) { k.Models = d.strings(v, f) },
		"apis":               func(f string, v *yaml.Node) { k.APIs = d.strings(v, f) },
		"mcp_servers":        func(f string, v *yaml.Node) { k.MCPServers = d.strings(v, f) },
		"client_turn_points": func(f string, v *yaml.Node) { k.ClientTurnPoints = d.bool(v, f) },
		"revoked":            func(f string, v *yaml.Node) { k.Revoked = d.bool(v, f) },
		"rate_limit": func(f string, v *yaml.Node) {
			r := &k.RateLimit
			d.mapping(v, f, map[string]handler{
				"requests": func(f string, v *yaml.Node) { r.Requests = d.int(v, f, 0) },
				"window":   func(f string, v *yaml.Node) { r.Window = d.duration(v, f, 0) },
			})
		},
	}
	if withEnv {
		keys["key_env"] = func(f string, v *yaml.Node) { k.KeyEnv = d.str(v, f) }
	}
	d.mapping(n, field, keys)
	if k.Name == "" {
		k.Name = k.KeyEnv
	}
	if k.AgentID == "" {
		k.AgentID = k.Name
	}
	if sha256Pattern.MatchString(k.SHA256) {
		hex.Decode(k.Hash[:], []byte(k.SHA256))
		k.hashed = true
	}
	return k
}

// resolveKeyEnv hashes the key a legacy entry's variable holds; the key
// itself is dropped.
func (k *APIKey) resolveKeyEnv(get func(string) string) {
	if k.KeyEnv == "" {
		return
	}
	k.Hash, k.hashed = [32]byte{}, false
	if v := get(k.KeyEnv); v != "" {
		k.Hash, k.hashed = sha256.Sum256([]byte(v)), true
	}
}

// readKeysFile reads a key file ("keys: [...]", sha256 entries only) and
// checks its keys, alone and against inline, the main file's keys.
func readKeysFile(file string, inline []APIKey) ([]APIKey, *problems) {
	dec := NewDecoder(file)
	d := dec.d
	data, err := os.ReadFile(file)
	if err != nil {
		d.ps.add(0, "", fmt.Sprintf("cannot read the key file: %v", err))
		return nil, d.ps
	}
	doc, err := readDocument(data)
	if err != nil {
		syntaxProblem(d.ps, err)
		return nil, d.ps
	}
	var keys []APIKey
	if doc != nil && len(doc.Content) > 0 {
		d.mapping(doc.Content[0], "", map[string]handler{
			"keys": func(f string, v *yaml.Node) {
				d.sequence(v, f, func(f string, i int, v *yaml.Node) {
					keys = append(keys, d.apiKey(v, f, false))
				})
			},
		})
	}
	if _, set := d.lines["keys"]; !set && len(d.ps.list) == 0 {
		// An emptied file must not silently revoke every key it held.
		d.ps.add(0, "", "the key file has no keys: list (write keys: [] to hold none)")
	}
	for i, k := range keys {
		checkKey(dec.problemAt, index("keys", i), k, false)
	}
	checkKeySet(dec.problemAt, "keys", keys, inline)
	return keys, d.ps
}

// readKeysFile reads auth.keys_file at load, adding its problems to ps.
func (c *Config) readKeysFile(ps *problems) {
	if c.Auth.KeysFile == "" {
		return
	}
	keys, kps := readKeysFile(c.Auth.KeysFile, c.Auth.APIKeys)
	c.Auth.FileKeys = keys
	ps.list = append(ps.list, kps.list...)
}

func (v *validator) auth() {
	a := v.c.Auth
	switch a.Mode {
	case "":
	case AuthKeys:
		if len(a.APIKeys) == 0 && a.KeysFile == "" {
			v.problem("auth.mode", "keys needs client keys: list them in auth.api_keys or auth.keys_file")
		}
	case AuthNone:
		if len(a.APIKeys) > 0 || a.KeysFile != "" {
			v.problem("auth.mode", "none serves clients without keys: remove auth.api_keys and auth.keys_file, or set mode: keys")
		}
	default:
		v.problem("auth.mode", "must be keys or none (got %q)", a.Mode)
	}
	for i, k := range a.APIKeys {
		checkKey(v.problem, index("auth.api_keys", i), k, true)
	}
	checkKeySet(v.problem, "auth.api_keys", a.APIKeys, nil)
	if a.AdminTokenEnv != "" {
		v.secret("auth.admin_token_env", a.AdminTokenEnv, a.AdminToken, false)
	}
}

// checkKey checks one key entry at f; inline entries may use key_env.
func checkKey(problem problemFunc, f string, k APIKey, inline bool) {
	switch {
	case k.Name == "" && inline:
		problem(f+".name", "is required (or key_env, which names the key by default)")
	case k.Name == "":
		problem(f+".name", "is required")
	case !keyNamePattern.MatchString(k.Name):
		problem(f+".name", "must be 1 to 64 letters, digits, '_', '.' and '-', starting with a letter or digit (got %q)", k.Name)
	}
	switch {
	case k.SHA256 != "" && k.KeyEnv != "":
		problem(f+".sha256", "set either sha256 or key_env, not both")
	case k.SHA256 != "":
		if !sha256Pattern.MatchString(k.SHA256) {
			// Never quoted back: it may be the key itself, pasted by mistake.
			problem(f+".sha256", "must be the SHA-256 of the key as 64 lowercase hex digits (`hooks-gateway keys hash` prints it); the key itself never belongs in a file")
		}
	case k.KeyEnv != "":
		if !envNamePattern.MatchString(k.KeyEnv) {
			problem(f+".key_env", "must be an environment variable name (got %q)", k.KeyEnv)
		} else if !k.hashed {
			problem(f+".key_env", "environment variable %s is not set", k.KeyEnv)
		}
	case inline:
		problem(f+".sha256", "is required: the SHA-256 of the key (or key_env, a variable holding the key)")
	default:
		problem(f+".sha256", "is required: the SHA-256 of the key")
	}
	if k.Models != nil && len(k.Models) == 0 {
		problem(f+".models", "must list at least one model glob (leave it out for every model)")
	}
	for j, g := range k.Models {
		if _, err := path.Match(g, ""); g == "" || err != nil {
			problem(index(f+".models", j), "must be a model glob in path.Match syntax (got %q)", g)
		}
	}
	if k.APIs != nil && len(k.APIs) == 0 {
		problem(f+".apis", "must list at least one API (leave it out for all)")
	}
	seen := make(map[string]bool, len(k.APIs))
	for j, api := range k.APIs {
		switch {
		case !slices.Contains(KeyAPIs, api):
			problem(index(f+".apis", j), "must be one of %s (got %q)", strings.Join(KeyAPIs, ", "), api)
		case seen[api]:
			problem(index(f+".apis", j), "duplicate API %q", api)
		}
		seen[api] = true
	}
	if r := k.RateLimit; r != (RateLimit{}) {
		if r.Requests <= 0 {
			problem(f+".rate_limit.requests", "must be a positive number of requests (got %d)", r.Requests)
		}
		if r.Window < minRateWindow {
			problem(f+".rate_limit.window", "must be at least 1s, such as 1m (got %s)", r.Window)
		}
	}
}

// checkKeySet checks that keys (at field) have unique names and hashes,
// among themselves and against others (the main file's keys, when keys
// are a key file's).
func checkKeySet(problem problemFunc, field string, keys, others []APIKey) {
	names := make(map[string]string)
	hashes := make(map[[32]byte]string)
	for _, k := range others {
		names[k.Name] = "auth.api_keys " + strconv.Quote(k.Name)
		if k.hashed {
			hashes[k.Hash] = "auth.api_keys " + strconv.Quote(k.Name)
		}
	}
	for i, k := range keys {
		f := index(field, i)
		if k.Name != "" {
			if other, dup := names[k.Name]; dup {
				problem(f+".name", "duplicate key name %q (also %s)", k.Name, other)
			} else {
				names[k.Name] = f
			}
		}
		if !k.hashed {
			continue
		}
		if other, dup := hashes[k.Hash]; dup {
			problem(f, "holds the same key as %s; each key must identify one client", other)
		} else {
			hashes[k.Hash] = f
		}
	}
}

// ValidKeyName reports whether s can name a client key (as policy routes'
// match.api_key do).
func ValidKeyName(s string) bool { return keyNamePattern.MatchString(s) }
