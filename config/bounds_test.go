package config

import (
	"strings"
	"testing"
)

// TestContextBoundFollowsBodyLimits: left out, max_context_bytes is derived
// from the largest body limit (twice it, plus the envelope allowance), so
// raising a body limit raises it along; set, it must be at least that, or
// the load fails naming the limit that requires more.
func TestContextBoundFollowsBodyLimits(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       int    // the resolved bound
		problem    string // the one problem expected instead
	}{
		{"defaults", "", 21 << 20, ""},
		{"response limit raised", "limits:\n  max_response_bytes: 32MiB\n", 65 << 20, ""},
		{"buffer raised", "streaming:\n  buffer_limit: 16MiB\n", 33 << 20, ""},
		{"request lowered", "limits:\n  max_request_bytes: 1MiB\n", 17 << 20, ""},
		{"set above", "enforcement:\n  max_context_bytes: 64MiB\n", 64 << 20, ""},
		{"set exactly", "enforcement:\n  max_context_bytes: 21MiB\n", 21 << 20, ""},
		{"set below", "enforcement:\n  max_context_bytes: 5MiB\n", 0,
			"gateway.yaml:5: enforcement.max_context_bytes: 5MiB is below the 21MiB the body limits require (2 × limits.max_request_bytes 10MiB + 1MiB for the members not taken from a body); raise it, leave it out to derive it, or lower the body limits"},
		{"set below a raised buffer", "enforcement:\n  max_context_bytes: 21MiB\nstreaming:\n  buffer_limit: 12MiB\n", 0,
			"gateway.yaml:5: enforcement.max_context_bytes: 21MiB is below the 25MiB the body limits require (2 × streaming.buffer_limit 12MiB + 1MiB for the members not taken from a body); raise it, leave it out to derive it, or lower the body limits"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.problem != "" {
				got := problemsOf(t, mockUpstream+tc.yaml)
				if len(got) != 1 || got[0] != tc.problem {
					t.Fatalf("problems %q\nwant [%s]", got, tc.problem)
				}
				return
			}
			c := mustParse(t, mockUpstream+tc.yaml)
			if c.Enforcement.MaxContextBytes != tc.want {
				t.Fatalf("max_context_bytes = %d, want %d", c.Enforcement.MaxContextBytes, tc.want)
			}
			if need := RequiredContextBytes(c.Limits, c.Streaming); int64(c.Enforcement.MaxContextBytes) < need {
				t.Fatalf("resolved bound %d is below the required %d", c.Enforcement.MaxContextBytes, need)
			}
		})
	}
}

// TestDefaultContextBound: the embedded default and DefaultEnforcement
// (the base of a policy file) carry the bound the default limits require.
func TestDefaultContextBound(t *testing.T) {
	d := Default()
	if got, want := int64(d.Enforcement.MaxContextBytes), RequiredContextBytes(d.Limits, d.Streaming); got != want || want != DefaultMaxContextBytes {
		t.Errorf("embedded default bound %d, want %d (= DefaultMaxContextBytes %d)", got, want, DefaultMaxContextBytes)
	}
	if got := DefaultEnforcement().MaxContextBytes; got != DefaultMaxContextBytes {
		t.Errorf("DefaultEnforcement bound %d, want %d", got, DefaultMaxContextBytes)
	}
	if d.Limits.MaxResponseBytes != d.Streaming.BufferLimit {
		t.Errorf("max_response_bytes %d and buffer_limit %d differ by default", d.Limits.MaxResponseBytes, d.Streaming.BufferLimit)
	}
	if s := sizeText(DefaultMaxContextBytes); !strings.HasSuffix(s, "MiB") {
		t.Errorf("sizeText(%d) = %s", DefaultMaxContextBytes, s)
	}
}
