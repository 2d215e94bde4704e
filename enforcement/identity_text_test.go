package enforcement

import (
	"context"
	"testing"
)

// A record's input identity lives in its emission's storage: every kept
// record still carries the identity computed afresh for its context after
// many later emissions.
func TestRecordIdentityKept(t *testing.T) {
	sink := &collectSink{}
	e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: sink})
	b := newTestBuilder()
	var want []string
	for i := range 200 {
		c := buildAt(t, b, Points()[i%8])
		want = append(want, mustIdentity(t, c))
		if _, err := e.EmitUnchecked(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	recs := sink.records()
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if r.InputIdentity == nil || *r.InputIdentity != want[i] {
			t.Fatalf("record %d: input identity %v, want %s", i, r.InputIdentity, want[i])
		}
		if r.EnforcedIdentity == nil || *r.EnforcedIdentity != want[i] {
			t.Fatalf("record %d: enforced identity %v, want %s", i, r.EnforcedIdentity, want[i])
		}
	}
}
