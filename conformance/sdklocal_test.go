package conformance

import (
	"context"
	"strings"
	"testing"
)

// TestSDKLocalConformance runs every vendored vector through the SDK-local
// harness: the declared surface must pass every applicable vector, and the
// only skips are the streaming/incremental part (capability not declared).
func TestSDKLocalConformance(t *testing.T) { requireConformant(t, NewSDKLocalHarness) }

// TestSDKLocalIncrementalConformance runs every vendored vector through the
// SDK-local harness declaring incremental_output: all 51 pass, none skip.
func TestSDKLocalIncrementalConformance(t *testing.T) {
	requireAllPass(t, NewSDKLocalIncrementalHarness)
}

// requireAllPass runs every vendored vector on a harness as subtests and
// requires each to pass: 51 passed, 0 skipped, 0 failed.
func requireAllPass(t *testing.T, factory HarnessFactory) {
	t.Helper()
	requireTotals(t, factory, 51, 0)
}

// requireConformant runs every vendored vector on a harness as subtests:
// every applicable vector passes and the only skips are the
// streaming/incremental part, 47 passed and 4 skipped in all.
func requireConformant(t *testing.T, factory HarnessFactory) {
	t.Helper()
	requireTotals(t, factory, 47, 4)
}

// requireTotals runs every vendored vector on a harness as subtests: none
// fails, only streaming/incremental vectors skip, and the totals are
// passed and skipped.
func requireTotals(t *testing.T, factory HarnessFactory, passed, skipped int) {
	t.Helper()
	vectors, err := EmbeddedVectors()
	if err != nil {
		t.Fatal(err)
	}
	report := Run(context.Background(), factory, vectors)
	for _, r := range report.Results {
		t.Run(r.ID, func(t *testing.T) {
			switch r.Status {
			case StatusFail:
				t.Errorf("%s (%s) failed:\n%s", r.ID, r.Title, "  - "+strings.Join(r.Failures, "\n  - "))
			case StatusSkip:
				if r.Part != "streaming/incremental" || skipped == 0 {
					t.Errorf("%s skipped: %s", r.ID, r.Detail)
				}
			}
		})
	}
	if got := report.Totals; got.Passed != passed || got.Skipped != skipped || got.Failed != 0 {
		t.Errorf("totals = %+v, want %d passed, %d skipped, 0 failed", got, passed, skipped)
	}
}
