package enforcement

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
)

const goldenIdentityPath = "../conformance/spec/golden/identity.json"

type goldenIdentityFixture struct {
	ID     string         `json:"id"`
	Ctx    map[string]any `json:"ctx"`
	Expect struct {
		CanonicalJSON   *string `json:"canonical_json"`
		ContextIdentity string  `json:"context_identity"`
		Error           string  `json:"error"`
	} `json:"expect"`
}

func loadGoldenIdentity(t *testing.T) []goldenIdentityFixture {
	t.Helper()
	data, err := os.ReadFile(goldenIdentityPath)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Fixtures []goldenIdentityFixture `json:"fixtures"`
	}
	// UseNumber: G-13 and G-N01 hinge on integer tokens at ±2^53.
	decodeNumber(t, data, &file)
	if len(file.Fixtures) != 18 {
		t.Fatalf("%d fixtures, want 18 (CTK.md §6.1)", len(file.Fixtures))
	}
	return file.Fixtures
}

// G-15 is a known upstream artefact (CTK.md §6.4). Its ctx holds the token
// 9.999999999999997e+22, but the generator parsed the text with serde_json
// without float_roundtrip, which is not correctly rounded and yields the
// neighbouring double 9.999999999999996e+22; the golden canonical bytes and
// identity were computed from that wrong double. We follow RFC 8785 on the
// literal as written (Go's decoder is correctly rounded), so our identity is
// the SHA-256 of bytes containing ...997e+22 and must differ from the golden.
const (
	g15ID          = "G-15-rfc8785-numbers"
	g15GoldenToken = "9.999999999999996e+22"
	g15OurToken    = "9.999999999999997e+22"
)

func TestGoldenIdentity(t *testing.T) {
	fixtures := loadGoldenIdentity(t)
	ids := map[string]string{}
	positives, negatives := 0, 0
	for _, fx := range fixtures {
		t.Run(fx.ID, func(t *testing.T) {
			ctx := Context(fx.Ctx)
			if fx.Expect.CanonicalJSON == nil {
				negatives++
				if fx.Expect.Error != ReasonContextInvalid {
					t.Fatalf("negative fixture expects %q", fx.Expect.Error)
				}
				if id, err := ContextIdentity(ctx, 0); err == nil {
					t.Fatalf("ContextIdentity = %q, want an error", id)
				}
				return
			}
			positives++
			got, err := ContextIdentity(ctx, 0)
			if err != nil {
				t.Fatalf("ContextIdentity: %v", err)
			}
			ids[fx.ID] = got
			if fx.ID != g15ID {
				if got != fx.Expect.ContextIdentity {
					t.Fatalf("identity = %s, want %s", got, fx.Expect.ContextIdentity)
				}
				return
			}
			golden := *fx.Expect.CanonicalJSON
			if strings.Count(golden, g15GoldenToken) != 2 {
				t.Fatalf("G-15 fixture changed upstream; revisit the artefact handling: %s", golden)
			}
			ours := strings.ReplaceAll(golden, g15GoldenToken, g15OurToken)
			canon, err := jcs.Canonicalize(IdentityProjection(ctx))
			if err != nil {
				t.Fatal(err)
			}
			if string(canon) != ours {
				t.Fatalf("canonical bytes\n got: %s\nwant: %s", canon, ours)
			}
			sum := sha256.Sum256([]byte(ours))
			if want := "sha256:" + hex.EncodeToString(sum[:]); got != want {
				t.Fatalf("identity = %s, want sha256 of our RFC 8785 bytes %s", got, want)
			}
			if got == fx.Expect.ContextIdentity {
				t.Fatalf("identity equals the serde-rounded golden %s; the literal was not followed", got)
			}
		})
	}
	if positives != 16 || negatives != 2 {
		t.Fatalf("%d positive, %d negative fixtures; want 16 and 2", positives, negatives)
	}
	// Optional and namespaced members never reach the identity (§10.2).
	if a, b := ids["G-05-l2-l3-stripped"], ids["G-05b-l2-l3-baseline"]; a == "" || a != b {
		t.Fatalf("G-05 identity %q != G-05b identity %q", a, b)
	}
}

// TestGoldenIdentityThroughEmitter checks that the emitter records the
// golden identities and turns the negative fixtures into a pre-dispatch
// deny host_error:context_invalid with null identities.
func TestGoldenIdentityThroughEmitter(t *testing.T) {
	for _, fx := range loadGoldenIdentity(t) {
		t.Run(fx.ID, func(t *testing.T) {
			intercept, calls := countingReg()
			e := newTestEmitter(t, Options{Interceptors: []Registration{intercept}})
			out, err := e.EmitUnchecked(context.Background(), Context(fx.Ctx))
			if err != nil {
				t.Fatal(err)
			}
			rec := out.Record
			if fx.Expect.CanonicalJSON == nil {
				if rec.Verdict.Decision != DecisionDeny || rec.Verdict.Reason != ReasonContextInvalid {
					t.Fatalf("verdict = %s %s, want deny %s", rec.Verdict.Decision, rec.Verdict.Reason, ReasonContextInvalid)
				}
				if rec.InputIdentity != nil || rec.EnforcedIdentity != nil || rec.IdentityProvider != IdentityJCSSHA256 {
					t.Fatalf("identities %v/%v provider %q: want null/null under jcs-sha256", rec.InputIdentity, rec.EnforcedIdentity, rec.IdentityProvider)
				}
				if calls.Load() != 0 || out.Proceed {
					t.Fatalf("calls=%d proceed=%v: a rejected context must not be dispatched", calls.Load(), out.Proceed)
				}
				return
			}
			if rec.InputIdentity == nil || rec.EnforcedIdentity == nil || *rec.InputIdentity != *rec.EnforcedIdentity {
				t.Fatalf("identities %v/%v, want equal and set", rec.InputIdentity, rec.EnforcedIdentity)
			}
			if fx.ID != g15ID && *rec.InputIdentity != fx.Expect.ContextIdentity {
				t.Fatalf("input_identity = %s, want %s", *rec.InputIdentity, fx.Expect.ContextIdentity)
			}
			if calls.Load() != 1 || !out.Proceed {
				t.Fatalf("calls=%d proceed=%v, want 1/true", calls.Load(), out.Proceed)
			}
		})
	}
}

// TestHMACSHA256Identity: the keyed provider MACs exactly the bytes
// jcs-sha256 hashes (so it inherits the golden projection rules, G-05 ==
// G-05b and the negative fixtures), is keyed, and follows the name rules.
func TestHMACSHA256Identity(t *testing.T) {
	key := []byte("0123456789abcdef")
	p, err := HMACSHA256("k1", key)
	if err != nil {
		t.Fatal(err)
	}
	other, err := HMACSHA256("k2", []byte("fedcba9876543210"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "hmac-sha256-k1" || p.IsNull() {
		t.Fatalf("name %q", p.Name())
	}
	ids := map[string]string{}
	for _, fx := range loadGoldenIdentity(t) {
		ctx := Context(fx.Ctx)
		id, err := p.Identity(ctx)
		if fx.Expect.CanonicalJSON == nil {
			if err == nil || id != nil {
				t.Errorf("%s: negative fixture identified as %v", fx.ID, id)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", fx.ID, err)
		}
		canon, err := jcs.Canonicalize(IdentityProjection(ctx))
		if err != nil {
			t.Fatal(err)
		}
		mac := hmac.New(sha256.New, key)
		mac.Write(canon)
		if want := "hmac-sha256:" + hex.EncodeToString(mac.Sum(nil)); *id != want {
			t.Errorf("%s: %s, want %s", fx.ID, *id, want)
		}
		if o, _ := other.Identity(ctx); *o == *id {
			t.Errorf("%s: identity does not depend on the key", fx.ID)
		}
		ids[fx.ID] = *id
	}
	if ids["G-05-l2-l3-stripped"] != ids["G-05b-l2-l3-baseline"] {
		t.Error("optional members changed the keyed identity")
	}
	for _, bad := range []struct {
		id  string
		key []byte
	}{{"k1", []byte("short")}, {"K1", key}, {"k 1", key}} {
		if _, err := HMACSHA256(bad.id, bad.key); err == nil {
			t.Errorf("HMACSHA256(%q, %d-byte key) accepted", bad.id, len(bad.key))
		}
	}
	// The caller's key slice is copied.
	k := append([]byte(nil), key...)
	q, _ := HMACSHA256("k1", k)
	c := buildAt(t, nil, Input)
	before, _ := q.Identity(c)
	k[0] ^= 0xff
	if after, _ := q.Identity(c); *after != *before {
		t.Error("provider aliases the caller's key")
	}
	// Through an emitter the record names the provider.
	e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Identity: &p})
	out, err := e.Emit(context.Background(), c)
	if err != nil || out.Record.IdentityProvider != "hmac-sha256-k1" || *out.Record.InputIdentity != *before {
		t.Fatalf("record %+v: %v", out.Record, err)
	}
}
