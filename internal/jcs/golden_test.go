package jcs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	gowebpki "github.com/gowebpki/jcs"
)

const goldenPath = "../../conformance/spec/golden/identity.json"

type goldenFixture struct {
	ID     string         `json:"id"`
	Note   string         `json:"note"`
	Ctx    map[string]any `json:"ctx"`
	Expect struct {
		CanonicalJSON   *string `json:"canonical_json"`
		ContextIdentity string  `json:"context_identity"`
		Error           string  `json:"error"`
	} `json:"expect"`
}

// decodeUseNumber decodes JSON text keeping number tokens as json.Number,
// as the project's loaders do.
func decodeUseNumber(t testing.TB, data []byte, into any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("decode: %v", err)
	}
}

func loadGolden(t *testing.T) []goldenFixture {
	t.Helper()
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("read golden fixtures: %v", err)
	}
	var file struct {
		Fixtures []goldenFixture `json:"fixtures"`
	}
	decodeUseNumber(t, data, &file)
	if len(file.Fixtures) != 18 {
		t.Fatalf("got %d fixtures, CTK.md §6.1 says 18", len(file.Fixtures))
	}
	return file.Fixtures
}

// G-15's ctx holds the token 9.999999999999997e+22 (double
// 0x44b52d02c7e14af5). The golden bytes say 9.999999999999996e+22, the
// neighbouring double, because the generator parsed the text with
// serde_json without float_roundtrip, which is not correctly rounded
// (CTK.md §6.4). We deliberately follow RFC 8785 over the value as
// written: ParseFloat is correctly rounded, so we print ...997e+22 and
// assert that instead; the context_identity of G-15 differs accordingly.
const (
	g15ID        = "G-15-rfc8785-numbers"
	g15Golden    = `"f":9.999999999999996e+22`
	g15RFC8785   = `"f":9.999999999999997e+22`
	g05ID, g05bI = "G-05-l2-l3-stripped", "G-05b-l2-l3-baseline"
)

func TestGoldenCanonical(t *testing.T) {
	positive := 0
	for _, fx := range loadGolden(t) {
		t.Run(fx.ID, func(t *testing.T) {
			if fx.Expect.CanonicalJSON == nil {
				if fx.Expect.Error != "host_error:context_invalid" {
					t.Fatalf("unexpected negative expectation %q", fx.Expect.Error)
				}
				return // covered by TestGoldenNegative
			}
			positive++
			want := *fx.Expect.CanonicalJSON
			if fx.ID == g15ID {
				// The token appears twice: in tool_call.args and in its
				// target alias.
				if strings.Count(want, g15Golden) != 2 {
					t.Fatalf("G-15 fixture changed: %s", want)
				}
				want = strings.ReplaceAll(want, g15Golden, g15RFC8785)
			}

			got, err := Canonicalize(fx.Ctx)
			if err != nil {
				t.Fatalf("Canonicalize: %v", err)
			}
			if string(got) != want {
				t.Fatalf("canonical bytes differ\n got: %s\nwant: %s", got, want)
			}

			// Append must agree and must keep dst's prefix.
			app, err := Append([]byte("prefix"), fx.Ctx)
			if err != nil || string(app) != "prefix"+want {
				t.Fatalf("Append = %q, %v", app, err)
			}

			// Evaluation of github.com/gowebpki/jcs: Marshal then Transform
			// reproduces the same bytes (G-15 included, for the same
			// correctly rounded reason).
			marshaled, err := json.Marshal(fx.Ctx)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := gowebpki.Transform(marshaled)
			if err != nil {
				t.Fatalf("gowebpki Transform: %v", err)
			}
			if string(theirs) != want {
				t.Fatalf("gowebpki differs\n got: %s\nwant: %s", theirs, want)
			}

			sum := sha256.Sum256(got)
			hashed := "sha256:" + hex.EncodeToString(sum[:])
			id, err := SHA256Identity(fx.Ctx, DefaultMaxDepth)
			if err != nil {
				t.Fatalf("SHA256Identity: %v", err)
			}
			if id != hashed {
				t.Fatalf("SHA256Identity = %s, sha256(Canonicalize) = %s", id, hashed)
			}

			switch fx.ID {
			case g05ID:
				// The ctx carries optional and namespaced fields; the
				// identity is over the projection, which is not this
				// package's job.
				if hashed == fx.Expect.ContextIdentity {
					t.Fatalf("G-05 whole-ctx hash unexpectedly equals the projection identity")
				}
			case g15ID:
				if hashed == fx.Expect.ContextIdentity {
					t.Fatalf("G-15 now matches the serde-rounded identity; revisit the comment above")
				}
			default:
				// G-05b included: its ctx holds only required and
				// conditional fields, so the whole ctx is its projection.
				if hashed != fx.Expect.ContextIdentity {
					t.Fatalf("identity = %s, want %s", hashed, fx.Expect.ContextIdentity)
				}
			}
		})
	}
	if positive != 16 {
		t.Fatalf("checked %d positive fixtures, want 16", positive)
	}
}

func TestGoldenNegative(t *testing.T) {
	for _, fx := range loadGolden(t) {
		switch {
		case strings.HasPrefix(fx.ID, "G-N01"):
			// Integer 2^53 in args: out of the identity domain.
			_, err := SHA256Identity(fx.Ctx, DefaultMaxDepth)
			if !errors.Is(err, ErrIntegerRange) {
				t.Fatalf("%s: SHA256Identity error = %v, want ErrIntegerRange", fx.ID, err)
			}
			if err := CheckIntegerDomain(fx.Ctx); !errors.Is(err, ErrIntegerRange) {
				t.Fatalf("%s: CheckIntegerDomain = %v", fx.ID, err)
			}
			if strings.Contains(err.Error(), "9007199254740992") {
				t.Fatalf("%s: message leaks the value: %v", fx.ID, err)
			}
			t.Logf("%s: %v", fx.ID, err)
		case strings.HasPrefix(fx.ID, "G-N02"):
			// A missing conditional field is an envelope (schema) failure,
			// checked before identity is computed; nothing for this package.
		}
	}
}
