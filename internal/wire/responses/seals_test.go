package responses

import (
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/seal"
)

// The seals' cost in bytes, as docs/responses-wire.md states it: a
// standard base64 blob (OpenAI's encrypted reasoning) is sealed decoded,
// 42 to 45 bytes and the key id beyond it; other text 4/3 of it plus the
// same; an item id 4/3 of it plus 44 and the key id (rounded up). Each
// opens to the value sealed.
func TestSealCost(t *testing.T) {
	keys, err := seal.New(seal.Key{ID: "k1", Secret: make([]byte, seal.MinSecretBytes)})
	if err != nil {
		t.Fatal(err)
	}
	k := len("k1")
	for _, n := range []int{0, 1, 2, 256, 1024, 4096, 16384} {
		raw := make([]byte, n)
		rand.Read(raw)
		blob := base64.StdEncoding.EncodeToString(raw)
		sealed := sealBlob(keys, blob)
		if over := len(sealed) - len(blob) - k; over < 42 || over > 45 {
			t.Errorf("a %d-character blob seals to %d characters: %d beyond it and the key id", len(blob), len(sealed), over)
		}
		if got, err := openBlob(keys, sealed); err != nil || got != blob {
			t.Errorf("a %d-character blob does not open to itself: %v", len(blob), err)
		}
	}
	for _, blob := range []string{"gAAAA", "not base64 at all", "QUJD\nREVG", "QUJ", "QUI=="} {
		sealed := sealBlob(keys, blob)
		if want := len(seal.Prefix) + k + 1 + base64.RawURLEncoding.EncodedLen(len(blob)+1+seal.Overhead); len(sealed) != want {
			t.Errorf("text %q seals to %d characters, want %d", blob, len(sealed), want)
		}
		if got, err := openBlob(keys, sealed); err != nil || got != blob {
			t.Errorf("text %q does not open to itself: %q %v", blob, got, err)
		}
	}
	for _, id := range []string{"rs_0123456789abcdef0123456789abcdef01234567", "msg_68b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3"} {
		sealed := keys.SealString(kindItemID, id)
		if want := len(seal.Prefix) + k + 1 + base64.RawURLEncoding.EncodedLen(len(id)+seal.Overhead); len(sealed) != want || want > 4*len(id)/3+44+k+2 {
			t.Errorf("a %d-character id seals to %d characters, want %d", len(id), len(sealed), want)
		}
	}
}
