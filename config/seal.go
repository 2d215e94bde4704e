package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/internal/seal"
)

// Seal configures the keys that seal opaque provider blobs on their way to
// clients (encrypted reasoning, thinking signatures, provider item ids;
// see docs/configuration.md#seal). Without keys the gateway seals under a
// random key of its own process: seals do not open on another replica or
// after a restart.
type Seal struct {
	// Keys seal and open; the first seals. Every replica needs the same.
	Keys []SealKey
}

// SealKey is one sealing key.
type SealKey struct {
	// ID names the key in every seal it makes (letters and digits, at most
	// 16).
	ID string
	// SecretEnv names the variable holding the secret, Secret is its value
	// (read at load; at least 32 bytes). Never print Secret.
	SecretEnv string
	Secret    []byte
}

// Keyring builds the keyring s describes: its keys, or an ephemeral key
// when it has none.
func (s Seal) Keyring() (*seal.Keyring, error) {
	if len(s.Keys) == 0 {
		return seal.Ephemeral(), nil
	}
	keys := make([]seal.Key, len(s.Keys))
	for i, k := range s.Keys {
		keys[i] = seal.Key{ID: k.ID, Secret: k.Secret}
	}
	return seal.New(keys...)
}

// Ephemeral reports whether seals last only as long as the process.
func (s Seal) Ephemeral() bool { return len(s.Keys) == 0 }

func (d *decoder) seal(n *yaml.Node, field string, s *Seal) {
	d.mapping(n, field, map[string]handler{
		"keys": func(f string, v *yaml.Node) {
			d.sequence(v, f, func(f string, _ int, v *yaml.Node) {
				var k SealKey
				d.mapping(v, f, map[string]handler{
					"id":         func(f string, v *yaml.Node) { k.ID = d.str(v, f) },
					"secret_env": func(f string, v *yaml.Node) { k.SecretEnv = d.str(v, f) },
				})
				s.Keys = append(s.Keys, k)
			})
		},
	})
}

func (c *Config) resolveSealEnv(get func(string) string) {
	for i := range c.Seal.Keys {
		k := &c.Seal.Keys[i]
		k.Secret = nil
		if v := get(k.SecretEnv); v != "" {
			k.Secret = []byte(v)
		}
	}
}

func (v *validator) seal() {
	seen := make(map[string]int, len(v.c.Seal.Keys))
	for i, k := range v.c.Seal.Keys {
		f := index("seal.keys", i)
		if seal.CheckKeyID(k.ID) != nil {
			v.problem(f+".id", "must be 1 to %d ASCII letters and digits (got %q)", seal.MaxKeyIDBytes, k.ID)
		} else if j, dup := seen[k.ID]; dup {
			v.problem(f+".id", "repeats %s", index("seal.keys", j))
		} else {
			seen[k.ID] = i
		}
		switch {
		case k.SecretEnv == "":
			v.problem(f+".secret_env", "is required: the variable holding the key's secret (at least %d bytes, e.g. `openssl rand -hex 32`)", seal.MinSecretBytes)
		case !envNamePattern.MatchString(k.SecretEnv) || len(k.Secret) == 0:
			v.secret(f+".secret_env", k.SecretEnv, string(k.Secret), false)
		case len(k.Secret) < seal.MinSecretBytes:
			v.problem(f+".secret_env", "the secret in $%s has %d bytes; at least %d are needed", k.SecretEnv, len(k.Secret), seal.MinSecretBytes)
		}
	}
}

// sealSummary is the startup log's note on the sealing keys (never a secret).
func (s Seal) summary() string {
	if s.Ephemeral() {
		return "" // the default; the gateway logs its own warning
	}
	return fmt.Sprintf("; seals under key %q (%d keys open)", s.Keys[0].ID, len(s.Keys))
}
