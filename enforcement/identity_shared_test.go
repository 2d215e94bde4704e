package enforcement

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// plainIdentity is the identity as computed before the target's bytes
// were shared: the whole projection walked, target and mirror each.
func plainIdentity(c Context, maxDepth int) (string, error) {
	if err := ValidateEnvelope(c); err != nil {
		return "", err
	}
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	return jcs.SHA256Identity(identityObject(c), maxDepth)
}

// randomValue is a value tree up to depth levels deep, with a violation
// (an integer beyond 2^53-1, an invalid number token, an invalid string
// or key) now and then.
func randomValue(rng *rand.Rand, depth int) any {
	if depth <= 1 || rng.IntN(4) == 0 {
		switch rng.IntN(40) {
		case 0:
			return json.Number("9007199254740993")
		case 1:
			return json.Number("0x1")
		case 2:
			return "bad \xff string"
		case 3, 4, 5:
			return json.Number("-12.5e3")
		case 6, 7:
			return nil
		case 8, 9:
			return rng.IntN(2) == 0
		}
		return strings.Repeat("é\"\n", rng.IntN(3)) + "text"
	}
	if rng.IntN(2) == 0 {
		a := make([]any, 1+rng.IntN(3))
		for i := range a {
			a[i] = randomValue(rng, depth-1)
		}
		return a
	}
	m := map[string]any{}
	for i := range 1 + rng.IntN(3) {
		k := string(rune('a'+rng.IntN(6))) + strings.Repeat("z", i)
		if rng.IntN(60) == 0 {
			k = "\xfe"
		}
		m[k] = randomValue(rng, depth-1)
	}
	return m
}

// The identity with the target's canonical bytes made once agrees with
// the plain walk, identities and error messages alike, over random
// contexts at every point: violations inside the shared target and
// outside it, depth bounds met exactly at the shared value's levels,
// mirrors with keys beyond the whitelist, and targets that no longer
// alias their mirror.
func TestSharedTargetIdentityMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	b := newTestBuilder()
	shared, failed := 0, 0
	for i := range 6000 {
		p := Points()[i%8]
		c := buildAt(t, b, p)
		target := c.Target()
		switch rng.IntN(6) {
		case 0, 1: // a random member inside the shared target
			if m, ok := target.(map[string]any); ok {
				m["x"+string(rune('a'+rng.IntN(3)))] = randomValue(rng, 1+rng.IntN(7))
			} else if a, ok := target.([]any); ok {
				a[rng.IntN(len(a))] = randomValue(rng, 1+rng.IntN(7))
			}
		case 2: // a whitelisted member's value, kept inside the whitelist
			if m, ok := target.(map[string]any); ok {
				for k := range m {
					m[k] = randomValue(rng, 1+rng.IntN(7))
					break
				}
			}
		case 3: // the target no longer the mirror's container
			c["target"] = jsonvalue.DeepCopy(target)
		case 4: // a violation outside the target
			if m, ok := c["agent"].(map[string]any); ok && rng.IntN(2) == 0 {
				cp := map[string]any{"id": "a\xffb", "framework": m["framework"]}
				c["agent"] = cp
			} else {
				c["spec"] = SpecVersion
			}
		}
		maxDepth := 2 + rng.IntN(8)
		if rng.IntN(4) == 0 {
			maxDepth = 0
		}
		var proj projection
		if maxDepth > 0 && proj.shareTarget(c, p, maxDepth) != nil {
			shared++
		}
		proj.reset()
		got, gotErr := ContextIdentity(c, maxDepth)
		want, wantErr := plainIdentity(c, maxDepth)
		if got != want || errText(gotErr) != errText(wantErr) {
			t.Fatalf("%d %s depth %d: got %q %v, want %q %v", i, p, maxDepth, got, gotErr, want, wantErr)
		}
		if wantErr != nil {
			failed++
		}
	}
	// Both outcomes, and the shared path, must have been exercised.
	if shared < 1000 || failed < 300 || failed > 5000 {
		t.Fatalf("corpus too thin: %d shared, %d failed", shared, failed)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// An emission's identity is the plain one too (the emitter's own depth
// bound, the projection storage in the emission).
func TestEmissionIdentityMatchesPlain(t *testing.T) {
	for _, depth := range []int{0, 3, 4} {
		e := newTestEmitter(t, Options{Interceptors: []Registration{{Interceptor: readsOnlyAllow{}}}, MaxDepth: depth})
		for _, p := range Points() {
			c := buildAt(t, nil, p)
			out, _ := e.EmitUnchecked(context.Background(), c)
			want, wantErr := plainIdentity(c, depth)
			r := out.Record
			if wantErr != nil {
				// The bounds check may refuse it first, in its own words.
				if r.InputIdentity != nil || r.Verdict.Reason != ReasonContextInvalid {
					t.Errorf("%s depth %d: record %v %q, want failure %v", p, depth, r.InputIdentity, r.Verdict.Message, wantErr)
				}
				continue
			}
			if r.InputIdentity == nil || *r.InputIdentity != want {
				t.Errorf("%s depth %d: identity %v, want %s", p, depth, r.InputIdentity, want)
			}
		}
	}
}
