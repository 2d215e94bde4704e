// Package seal wraps opaque provider blobs that must round-trip through a
// client (encrypted reasoning, thinking signatures, redacted thinking,
// encrypted citation indexes, provider item ids) in the gateway's own
// authenticated encryption.
//
// Complete mediation forbids releasing upstream bytes no verdict saw, and
// an opaque blob cannot be judged: it may carry plaintext. So the client
// receives the blob sealed with AES-256-GCM under the gateway's key (bytes
// the gateway made), and on the way back only a seal the gateway made
// opens: the upstream receives exactly the blob it issued, and a blob a
// client invented is refused, which also closes the client-to-provider
// channel.
//
// A seal is
//
//	hgs1_<key id>_<base64url(nonce ‖ ciphertext ‖ tag)>
//
// with the kind of blob (the member it travels in) bound as additional
// data, so a seal taken from one member does not open in another. The key
// id names the key that opens it: a Keyring holds the active key, which
// seals, and older keys, which still open, so keys rotate without a
// store. Every replica given the same keys opens every other's seals.
// The cost is 4/3 of the blob plus 44 bytes (nonce, tag, prefix) and the
// key id.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// Kind names the member a blob travels in. It is bound into the seal.
type Kind string

// Prefix starts every seal; the version is in it.
const Prefix = "hgs1_"

// MinSecretBytes is the shortest secret a key may have.
const MinSecretBytes = 32

// MaxKeyIDBytes bounds a key id, which every seal carries.
const MaxKeyIDBytes = 16

// Overhead is what sealing adds to a blob before base64: the nonce and the tag.
const Overhead = 12 + 16

// ErrNotSealed reports a value that is not a seal this gateway made: not
// in the seal format, sealed under a key it does not hold, for another
// kind, or altered.
var ErrNotSealed = errors.New("not sealed by this gateway")

// Key is one sealing key: an id (which seals name) and a secret.
type Key struct {
	ID     string
	Secret []byte
}

// Keyring seals under its active key and opens under any of its keys. It
// is safe for concurrent use; Replace swaps its keys atomically, so the
// surfaces that hold it see a rotation without being rebuilt.
type Keyring struct {
	ring atomic.Pointer[ring]
}

// ring is one set of keys.
type ring struct {
	active string
	aeads  map[string]cipher.AEAD
}

// New returns a keyring whose first key seals; every key opens. Key ids
// are 1 to MaxKeyIDBytes ASCII letters and digits, unique; secrets are at
// least MinSecretBytes long.
func New(keys ...Key) (*Keyring, error) {
	r, err := newRing(keys)
	if err != nil {
		return nil, err
	}
	k := new(Keyring)
	k.ring.Store(r)
	return k, nil
}

// Replace makes keys the keyring's keys (the first seals), as New checks
// them; on error the keys in effect stay.
func (k *Keyring) Replace(keys ...Key) error {
	r, err := newRing(keys)
	if err != nil {
		return err
	}
	k.ring.Store(r)
	return nil
}

// Generation identifies the keys k holds now: it changes with every
// Replace, so what was opened under one generation can be told from what
// another would open.
func (k *Keyring) Generation() any { return k.ring.Load() }

func newRing(keys []Key) (*ring, error) {
	if len(keys) == 0 {
		return nil, errors.New("seal: no key")
	}
	k := &ring{active: keys[0].ID, aeads: make(map[string]cipher.AEAD, len(keys))}
	for _, key := range keys {
		if err := CheckKeyID(key.ID); err != nil {
			return nil, err
		}
		if len(key.Secret) < MinSecretBytes {
			return nil, fmt.Errorf("seal: key %q: the secret has %d bytes, at least %d are needed", key.ID, len(key.Secret), MinSecretBytes)
		}
		if _, dup := k.aeads[key.ID]; dup {
			return nil, fmt.Errorf("seal: key %q is given twice", key.ID)
		}
		aead, err := newAEAD(key.Secret)
		if err != nil {
			return nil, fmt.Errorf("seal: key %q: %w", key.ID, err)
		}
		k.aeads[key.ID] = aead
	}
	return k, nil
}

// Ephemeral returns a keyring with one random key: seals open only in this
// process, until it exits. It is the default when no key is configured
// (one replica, and clients that restart their conversations with it).
// Its key id is random too ("eph" and eight letters and digits), so a seal
// from an earlier process is told apart from a forgery: it names a key
// the gateway no longer holds.
func Ephemeral() *Keyring {
	secret := make([]byte, MinSecretBytes)
	rand.Read(secret)
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	id := []byte("eph00000000")
	rand.Read(id[3:]) // apart from the secret: the id is public
	for i := 3; i < len(id); i++ {
		id[i] = alnum[int(id[i])%len(alnum)]
	}
	k, err := New(Key{ID: string(id), Secret: secret})
	if err != nil {
		panic(err) // a fixed valid id and a full-length secret
	}
	return k
}

// CheckKeyID reports whether id can name a key.
func CheckKeyID(id string) error {
	if id == "" || len(id) > MaxKeyIDBytes {
		return fmt.Errorf("seal: a key id has 1 to %d characters", MaxKeyIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return fmt.Errorf("seal: key id %q: only ASCII letters and digits", id)
		}
	}
	return nil
}

// newAEAD derives the AES-256 key from secret with HKDF-SHA256, so any
// high-entropy secret of at least MinSecretBytes serves.
func newAEAD(secret []byte) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, secret, nil, "hooks-gateway seal v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// ActiveKeyID is the id of the key that seals.
func (k *Keyring) ActiveKeyID() string { return k.ring.Load().active }

// Seal returns blob sealed for kind under the active key.
func (k *Keyring) Seal(kind Kind, blob []byte) string {
	return string(k.AppendSeal(nil, kind, blob))
}

// SealString is Seal for a string blob.
func (k *Keyring) SealString(kind Kind, blob string) string {
	return string(k.AppendSeal(nil, kind, []byte(blob)))
}

// SealedLen is the length of the seal of an n-byte blob.
func (k *Keyring) SealedLen(n int) int {
	return len(Prefix) + len(k.ring.Load().active) + 1 + base64.RawURLEncoding.EncodedLen(n+Overhead)
}

// AppendSeal appends the seal of blob for kind to dst.
func (k *Keyring) AppendSeal(dst []byte, kind Kind, blob []byte) []byte {
	r := k.ring.Load()
	aead := r.aeads[r.active]
	raw := make([]byte, aead.NonceSize(), aead.NonceSize()+len(blob)+aead.Overhead())
	rand.Read(raw)
	raw = aead.Seal(raw, raw, blob, additional(r.active, kind))
	dst = append(dst, Prefix...)
	dst = append(dst, r.active...)
	dst = append(dst, '_')
	return base64.RawURLEncoding.AppendEncode(dst, raw)
}

// IsSeal reports whether s has the form of a seal (any key, any kind); it
// does not authenticate it.
func IsSeal(s string) bool {
	if !strings.HasPrefix(s, Prefix) {
		return false
	}
	id, _, ok := strings.Cut(s[len(Prefix):], "_")
	return ok && CheckKeyID(id) == nil
}

// Open returns the blob sealed in s for kind, or an error wrapping
// ErrNotSealed. Errors never quote s.
func (k *Keyring) Open(kind Kind, s string) ([]byte, error) {
	if !strings.HasPrefix(s, Prefix) {
		return nil, ErrNotSealed
	}
	id, enc, ok := strings.Cut(s[len(Prefix):], "_")
	if !ok {
		return nil, ErrNotSealed
	}
	aead, ok := k.ring.Load().aeads[id]
	if !ok {
		if CheckKeyID(id) == nil {
			return nil, fmt.Errorf("%w: sealed under key %q, which the gateway no longer holds", ErrNotSealed, id)
		}
		return nil, ErrNotSealed
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrNotSealed
	}
	nonce, ct := raw[:aead.NonceSize()], raw[aead.NonceSize():]
	blob, err := aead.Open(ct[:0:0], nonce, ct, additional(id, kind))
	if err != nil {
		return nil, ErrNotSealed
	}
	return blob, nil
}

// OpenString is Open returning a string.
func (k *Keyring) OpenString(kind Kind, s string) (string, error) {
	b, err := k.Open(kind, s)
	return string(b), err
}

// additional is the data bound into a seal besides its blob: the format,
// the key id and the kind.
func additional(id string, kind Kind) []byte {
	return []byte("hgs1\x00" + id + "\x00" + string(kind))
}
