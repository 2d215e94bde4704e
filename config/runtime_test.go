package config

import (
	"slices"
	"testing"
)

// TestRuntimeSection: the default pace when left out, the key read, and
// the bounds reported at their line.
func TestRuntimeSection(t *testing.T) {
	if got := mustParse(t, mockUpstream).Runtime; got.GCPercent != DefaultGCPercent {
		t.Fatalf("default gc_percent = %d, want %d", got.GCPercent, DefaultGCPercent)
	}
	for src, want := range map[string]int{"runtime:\n  gc_percent: 0\n": 0, "runtime:\n  gc_percent: 150\n": 150} {
		if got := mustParse(t, mockUpstream+src).Runtime.GCPercent; got != want {
			t.Errorf("%q: gc_percent = %d, want %d", src, got, want)
		}
	}
	got := problemsOf(t, mockUpstream+"runtime:\n  gc_percent: -5\n")
	want := "gateway.yaml:5: runtime.gc_percent: must be from 0 (the runtime's own setting) to 10000 (got -5)"
	if !slices.Contains(got, want) {
		t.Fatalf("problems %q, want %q", got, want)
	}
}
