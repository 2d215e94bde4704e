package seal

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func secret(c byte) []byte { return bytes.Repeat([]byte{c}, MinSecretBytes) }

func TestSealOpensOnlyWhereItWasMade(t *testing.T) {
	k, err := New(Key{ID: "k1", Secret: secret('a')})
	if err != nil {
		t.Fatal(err)
	}
	blob := []byte("sk-proj-abcdefghijklmnopqrstuvwx inside a provider blob")
	s := k.Seal("responses.encrypted_content", blob)
	if !strings.HasPrefix(s, "hgs1_k1_") || !IsSeal(s) {
		t.Fatalf("seal %q lacks its prefix", s)
	}
	if strings.Contains(s, "sk-proj") {
		t.Fatal("the seal carries the blob's plaintext")
	}
	if len(s) != k.SealedLen(len(blob)) {
		t.Fatalf("SealedLen = %d, the seal has %d", k.SealedLen(len(blob)), len(s))
	}
	got, err := k.Open("responses.encrypted_content", s)
	if err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if s2 := k.Seal("responses.encrypted_content", blob); s2 == s {
		t.Fatal("two seals of one blob are equal: the nonce is not fresh")
	}

	other, _ := New(Key{ID: "k1", Secret: secret('b')})
	tampered := []byte(s)
	tampered[len(tampered)-3] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"another kind":          func() ([]byte, error) { return k.Open("messages.signature", s) },
		"another secret":        func() ([]byte, error) { return other.Open("responses.encrypted_content", s) },
		"altered":               func() ([]byte, error) { return k.Open("responses.encrypted_content", string(tampered)) },
		"a provider's own blob": func() ([]byte, error) { return k.Open("responses.encrypted_content", "gAAAAABo-provider-blob") },
		"empty":                 func() ([]byte, error) { return k.Open("responses.encrypted_content", "") },
		"prefix only":           func() ([]byte, error) { return k.Open("responses.encrypted_content", "hgs1_k1_") },
		"no key id":             func() ([]byte, error) { return k.Open("responses.encrypted_content", "hgs1_abc") },
	} {
		if b, err := open(); !errors.Is(err, ErrNotSealed) || b != nil {
			t.Errorf("%s: Open = %q, %v; want ErrNotSealed", name, b, err)
		}
	}
}

func TestRotation(t *testing.T) {
	old, _ := New(Key{ID: "k1", Secret: secret('a')})
	sealedOld := old.SealString("k", "blob")

	rotated, err := New(Key{ID: "k2", Secret: secret('c')}, Key{ID: "k1", Secret: secret('a')})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotated.OpenString("k", sealedOld); err != nil || got != "blob" {
		t.Fatalf("a seal of the previous key: %q, %v", got, err)
	}
	sealedNew := rotated.SealString("k", "blob")
	if !strings.HasPrefix(sealedNew, "hgs1_k2_") || rotated.ActiveKeyID() != "k2" {
		t.Fatalf("the first key must seal: %q", sealedNew)
	}
	retired, _ := New(Key{ID: "k2", Secret: secret('c')})
	_, err = retired.Open("k", sealedOld)
	if !errors.Is(err, ErrNotSealed) || !strings.Contains(err.Error(), `"k1"`) {
		t.Fatalf("a retired key's seal: %v; want ErrNotSealed naming the key", err)
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	for name, keys := range map[string][]Key{
		"none":         nil,
		"short secret": {{ID: "k1", Secret: []byte("short")}},
		"empty id":     {{ID: "", Secret: secret('a')}},
		"id with _":    {{ID: "k_1", Secret: secret('a')}},
		"long id":      {{ID: strings.Repeat("k", MaxKeyIDBytes+1), Secret: secret('a')}},
		"duplicate":    {{ID: "k1", Secret: secret('a')}, {ID: "k1", Secret: secret('b')}},
	} {
		if _, err := New(keys...); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

func TestEphemeral(t *testing.T) {
	a, b := Ephemeral(), Ephemeral()
	s := a.SealString("k", "x")
	if got, err := a.OpenString("k", s); err != nil || got != "x" {
		t.Fatalf("%q, %v", got, err)
	}
	_, err := b.Open("k", s)
	if err == nil {
		t.Fatal("two ephemeral keyrings share a key")
	}
	// Another process's seal names a key this one does not hold.
	if a.ActiveKeyID() == b.ActiveKeyID() || !strings.Contains(err.Error(), "no longer holds") {
		t.Fatalf("ephemeral key ids %q and %q; opening the other's seal: %v", a.ActiveKeyID(), b.ActiveKeyID(), err)
	}
}

func BenchmarkSeal1KiB(b *testing.B) {
	k, _ := New(Key{ID: "k1", Secret: secret('a')})
	blob := bytes.Repeat([]byte("x"), 1024)
	buf := make([]byte, 0, k.SealedLen(len(blob)))
	b.SetBytes(int64(len(blob)))
	for b.Loop() {
		buf = k.AppendSeal(buf[:0], "k", blob)
	}
}

func BenchmarkOpen1KiB(b *testing.B) {
	k, _ := New(Key{ID: "k1", Secret: secret('a')})
	s := k.Seal("k", bytes.Repeat([]byte("x"), 1024))
	b.SetBytes(1024)
	for b.Loop() {
		if _, err := k.Open("k", s); err != nil {
			b.Fatal(err)
		}
	}
}

func TestReplaceRotatesInPlace(t *testing.T) {
	k, _ := New(Key{ID: "k1", Secret: secret('a')})
	before := k.SealString("k", "blob")
	if err := k.Replace(Key{ID: "k2", Secret: secret('b')}, Key{ID: "k1", Secret: secret('a')}); err != nil {
		t.Fatal(err)
	}
	if got, err := k.OpenString("k", before); err != nil || got != "blob" {
		t.Fatalf("a seal made before the rotation: %q, %v", got, err)
	}
	if s := k.SealString("k", "blob"); !strings.HasPrefix(s, "hgs1_k2_") {
		t.Fatalf("after the rotation the new key must seal: %q", s)
	}
	if err := k.Replace(Key{ID: "k3", Secret: []byte("short")}); err == nil {
		t.Fatal("Replace accepted a short secret")
	}
	if k.ActiveKeyID() != "k2" {
		t.Fatalf("a refused Replace changed the keys: active %q", k.ActiveKeyID())
	}
}

// TestSealedLenDocumentedFigures holds docs/configuration.md#seal to the
// code: the formula, a 4 KiB encrypted_content's growth and the length of
// a sealed item id.
func TestSealedLenDocumentedFigures(t *testing.T) {
	k, err := New(Key{ID: "k2", Secret: secret('a')})
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 300; n++ {
		if want := 6 + len("k2") + (4*(n+28)+2)/3; k.SealedLen(n) != want {
			t.Fatalf("SealedLen(%d) = %d, the documented formula gives %d", n, k.SealedLen(n), want)
		}
	}
	// encrypted_content is base64 and sealed decoded: 4 KiB decoded is
	// 5,464 characters on the wire.
	wire := base64.StdEncoding.EncodedLen(4096)
	growth := float64(k.SealedLen(4096)-wire) / float64(wire)
	if growth < 0.0075 || growth >= 0.0085 {
		t.Errorf("a 4 KiB encrypted_content grows by %.2f%%, the docs say 0.8%%", 100*growth)
	}
	if lo, hi := len(k.SealString("responses.item_id", strings.Repeat("x", 43))), k.SealedLen(52); lo != 103 || hi != 115 {
		t.Errorf("item ids of 43 to 52 characters seal to %d to %d characters, the docs say 103 to 115", lo, hi)
	}
}
