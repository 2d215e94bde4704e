package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Status is a vector's result status.
type Status string

// Result statuses.
const (
	StatusPass Status = "pass"
	StatusFail Status = "fail"
	StatusSkip Status = "skip"
)

// Result is one vector's outcome (CTK.md §8).
type Result struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Part is the vector's part tag; "" when it has none.
	Part   string `json:"part"`
	Status Status `json:"status"`
	// Detail carries the skip reason.
	Detail string `json:"detail,omitempty"`
	// Failures lists what differed; empty unless Status is fail.
	Failures []string `json:"failures"`
}

// Run drives every vector through a fresh harness from factory and
// returns the report. The declaration comes from one extra harness that
// is never set up. A vector is skipped when the declaration lacks one of
// its capabilities; otherwise the harness is set up, run and torn down
// (teardown always runs), and the run record is asserted. A setup or run
// error, or a harness panic, fails the vector with a single failure and
// no assertions. Once ctx is done the remaining vectors fail unrun.
func Run(ctx context.Context, factory HarnessFactory, vectors []*Vector) Report {
	decl := factory().Declaration()
	results := make([]Result, 0, len(vectors))
	for _, v := range vectors {
		results = append(results, runVector(ctx, factory, decl, v))
	}
	return NewReport(decl, results)
}

func runVector(ctx context.Context, factory HarnessFactory, decl Declaration, v *Vector) Result {
	res := Result{ID: v.ID, Title: v.Title, Part: v.Part, Status: StatusPass, Failures: []string{}}
	fail := func(msg string) Result {
		res.Status = StatusFail
		res.Failures = []string{msg}
		return res
	}
	if missing := MissingCapabilities(v, decl); len(missing) > 0 {
		res.Status = StatusSkip
		res.Detail = fmt.Sprintf("missing capabilities: %v", missing)
		return res
	}
	if err := ctx.Err(); err != nil {
		return fail("not run: " + err.Error())
	}
	rr, err := execute(ctx, factory(), v)
	if err != nil {
		return fail(err.Error())
	}
	rr.Postures = declaredPostures(decl)
	if failures := Assert(v, rr, decl); len(failures) > 0 {
		res.Status = StatusFail
		res.Failures = failures
	}
	return res
}

// MissingCapabilities returns, in vector order, the capabilities v
// requires that decl does not declare (CTK.md §7.2); unknown capability
// strings are simply missing.
func MissingCapabilities(v *Vector, decl Declaration) []string {
	var missing []string
	for _, c := range v.Capabilities {
		if !slices.Contains(decl.Capabilities, c) {
			missing = append(missing, c)
		}
	}
	return missing
}

// execute runs setup and run on h with a private copy of v, always
// tearing down, and turns harness errors and panics into one error.
func execute(ctx context.Context, h Harness, v *Vector) (rr *RunRecord, err error) {
	defer func() {
		if terr := teardown(h); terr != nil && err == nil {
			rr, err = nil, terr
		}
	}()
	if err := guard("harness.Setup", func() error { return h.Setup(v.Clone()) }); err != nil {
		return nil, err
	}
	if err := guard("harness.Run", func() error {
		var runErr error
		rr, runErr = h.Run(ctx)
		return runErr
	}); err != nil {
		return nil, err
	}
	if rr == nil {
		return nil, errors.New("harness.Run: returned no RunRecord")
	}
	// Postures are the runner's to fill; copy so the harness's record is untouched.
	cp := *rr
	return &cp, nil
}

func teardown(h Harness) error {
	return guard("harness.Teardown", func() error { h.Teardown(); return nil })
}

// guard calls f and reports its error or panic prefixed with stage.
func guard(stage string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s panicked: %v", stage, p)
		}
	}()
	if err := f(); err != nil {
		return fmt.Errorf("%s: %w", stage, err)
	}
	return nil
}

// declaredPostures is the RunRecord.postures the runner forwards: the
// declaration's postures with tool_seam_host_error defaulting to continue.
func declaredPostures(decl Declaration) map[string]string {
	p := maps.Clone(decl.Postures)
	if p == nil {
		p = map[string]string{}
	}
	if p[PostureToolSeamHostError] == "" {
		p[PostureToolSeamHostError] = PostureContinue
	}
	return p
}
