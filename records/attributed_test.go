package records

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// The package's sinks and Fanout take the attribution as an argument.
var (
	_ AttributedSink = (*Writer)(nil)
	_ AttributedSink = (*JSONL)(nil)
	_ AttributedSink = (*HTTP)(nil)
	_ AttributedSink = (*RedisStream)(nil)
	_ AttributedSink = Fanout(nil)
)

// TestAttributedWithoutContext: an Attributed sink over the package's
// sinks (alone or fanned out, with a sink reading the attribution from
// its context beside them) writes the lines an attribution in the context
// writes: envelopes and markers name the policy and route.
func TestAttributedWithoutContext(t *testing.T) {
	framing := Framing{Format: FormatEnvelope}
	a := Attribution{PolicyVersion: "v1", Route: "payments"}
	recs := []*enforcement.Record{sessionRecord("a", 0, enforcement.AgentStartup), sessionRecord("a", 1, enforcement.AgentShutdown)}

	var want bytes.Buffer
	ref := NewFramedWriter(&want, framing)
	for _, r := range recs {
		if err := ref.WriteRecord(WithAttribution(context.Background(), a), r); err != nil {
			t.Fatal(err)
		}
	}

	var got bytes.Buffer
	w := NewFramedWriter(&got, framing)
	j, err := OpenJSONL(filepath.Join(t.TempDir(), "r.jsonl"), JSONLOptions{Framing: framing})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var seen []Attribution
	fromCtx := enforcement.RecordSinkFunc(func(ctx context.Context, _ *enforcement.Record) error {
		seen = append(seen, AttributionFrom(ctx))
		return nil
	})
	sink := Attributed(Fanout{w, j, fromCtx}, a)
	for _, r := range recs {
		if err := sink.WriteRecord(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != want.String() {
		t.Errorf("writer:\n got %s\nwant %s", got.String(), want.String())
	}
	if b, err := os.ReadFile(j.Path()); err != nil || string(b) != want.String() {
		t.Errorf("jsonl (%v):\n got %s\nwant %s", err, b, want.String())
	}
	if len(seen) != 2 || seen[0] != a || seen[1] != a {
		t.Errorf("a sink without WriteAttributed saw %+v", seen)
	}

	var marked0 bytes.Buffer
	single := Attributed(NewFramedWriter(&marked0, marked), a)
	if err := single.WriteRecord(context.Background(), recs[0]); err != nil {
		t.Fatal(err)
	}
	wantKinds(t, kinds(t, marked0.String()), "m:v1", "r:a")
}
