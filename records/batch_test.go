package records

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// The package's sinks and Fanout take batches; Attributed's sink passes
// them on (enforcement.RecordBatchSink).
var (
	_ AttributedBatchSink         = (*Writer)(nil)
	_ AttributedBatchSink         = (*JSONL)(nil)
	_ AttributedBatchSink         = (*RedisStream)(nil)
	_ AttributedBatchSink         = Fanout(nil)
	_ enforcement.RecordBatchSink = attributedSink{}
)

// countingWriter counts the writes it takes.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(b)
}

// A batch writes exactly the lines its records written one by one write,
// markers included, with one write: on the writer, the JSONL file, fanned
// out, in both formats, across a policy change.
func TestBatchWritesTheLinesOfSingleWrites(t *testing.T) {
	recs := []*enforcement.Record{
		sessionRecord("a", 0, enforcement.AgentStartup),
		sessionRecord("a", 1, enforcement.Input),
		sessionRecord("a", 2, enforcement.PreModelCall),
	}
	for _, framing := range []Framing{marked, {Format: FormatEnvelope}, {}} {
		for _, a := range []Attribution{{PolicyVersion: "v1"}, {PolicyVersion: "v2", Route: "r"}} {
			var want bytes.Buffer
			ref := NewFramedWriter(&want, framing)
			var got countingWriter
			w := NewFramedWriter(&got, framing)
			path := filepath.Join(t.TempDir(), "r.jsonl")
			j, err := OpenJSONL(path, JSONLOptions{Framing: framing})
			if err != nil {
				t.Fatal(err)
			}
			// Marker lines carry the time they are written at.
			now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
			ref.fr.now, w.fr.now, j.fr.now = now, now, now
			for _, v := range []string{"v1", a.PolicyVersion} { // a policy change between batches
				a := Attribution{PolicyVersion: v, Route: a.Route}
				for _, r := range recs {
					if err := ref.WriteAttributed(context.Background(), r, a); err != nil {
						t.Fatal(err)
					}
				}
				before := got.writes
				if err := Attributed(w, a).(enforcement.RecordBatchSink).WriteRecords(context.Background(), recs); err != nil {
					t.Fatal(err)
				}
				if n := got.writes - before; n != 1 {
					t.Errorf("%+v %+v: a batch of %d took %d writes, want 1", framing, a, len(recs), n)
				}
				if err := WriteAttributedBatch(context.Background(), Fanout{j}, recs, a); err != nil {
					t.Fatal(err)
				}
			}
			j.Close()
			if got.String() != want.String() {
				t.Errorf("%+v %+v: writer:\n got %s\nwant %s", framing, a, got.String(), want.String())
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != want.String() {
				t.Errorf("%+v %+v: jsonl (%v):\n got %s\nwant %s", framing, a, err, b, want.String())
			}
		}
	}
}

// Sinks without batches get the records one by one, the errors joined.
func TestBatchFallsBackToSingleWrites(t *testing.T) {
	var n int
	boom := errors.New("boom")
	one := enforcement.RecordSinkFunc(func(ctx context.Context, _ *enforcement.Record) error {
		n++
		if AttributionFrom(ctx).PolicyVersion != "v1" {
			t.Error("a sink without WriteAttributed lost the attribution")
		}
		return boom
	})
	recs := []*enforcement.Record{sessionRecord("a", 0, enforcement.Input), sessionRecord("a", 1, enforcement.Output)}
	err := WriteAttributedBatch(context.Background(), one, recs, Attribution{PolicyVersion: "v1"})
	if n != 2 || !errors.Is(err, boom) {
		t.Errorf("%d writes, error %v; want 2 and boom", n, err)
	}
}

// The Redis stream adds a batch in one MULTI/EXEC, marker first.
func TestRedisStreamBatch(t *testing.T) {
	url, _ := redistest.Start(t)
	s, err := NewRedisStream(RedisStreamOptions{URL: url, Framing: marked})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs := []*enforcement.Record{sessionRecord("a", 0, enforcement.Input), sessionRecord("b", 1, enforcement.Output)}
	if err := s.WriteAttributedBatch(context.Background(), recs, Attribution{PolicyVersion: "v1"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range xrange(t, url, DefaultStream) {
		for field, v := range m.Values {
			got = append(got, field+"="+kinds(t, v.(string))[0])
		}
	}
	wantKinds(t, got, "policy=m:v1", "record=r:a", "record=r:b")
}

// A record that cannot be marshaled is the batch's only loss: the others
// are written, in order, and the error names the failure.
func TestBatchLosesOnlyTheUnframableRecord(t *testing.T) {
	bad := sessionRecord("a", 1, enforcement.Input)
	bad.Verdict.Evidence = &enforcement.Evidence{Extra: map[string]any{"n": make(chan int)}} // an interceptor's evidence, propagated as received
	recs := []*enforcement.Record{sessionRecord("a", 0, enforcement.AgentStartup), bad, sessionRecord("a", 2, enforcement.PreModelCall)}
	var got countingWriter
	w := NewWriter(&got)
	err := w.WriteAttributedBatch(context.Background(), recs, Attribution{})
	if err == nil {
		t.Fatal("no error for a record that cannot be marshaled")
	}
	var want bytes.Buffer
	ref := NewWriter(&want)
	for _, r := range []*enforcement.Record{recs[0], recs[2]} {
		if err := ref.WriteAttributed(context.Background(), r, Attribution{}); err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != want.String() || got.writes != 1 {
		t.Errorf("wrote %q in %d writes, want the two good records' lines %q in one", got.String(), got.writes, want.String())
	}
	// All of a batch unframable: nothing written, no empty write.
	got = countingWriter{}
	if err := w.WriteAttributedBatch(context.Background(), []*enforcement.Record{bad}, Attribution{}); err == nil || got.writes != 0 {
		t.Errorf("a batch of one bad record: err %v, %d writes", err, got.writes)
	}
}

// A batch write reports how many of its records it lost: those that could
// not be framed, or all of them when the write failed; record by record
// and fanned out alike.
func TestBatchReportsFailedRecords(t *testing.T) {
	bad := sessionRecord("a", 1, enforcement.Input)
	bad.Verdict.Evidence = &enforcement.Evidence{Extra: map[string]any{"n": make(chan int)}}
	recs := []*enforcement.Record{sessionRecord("a", 0, enforcement.AgentStartup), bad, sessionRecord("a", 2, enforcement.PreModelCall)}
	failing := enforcement.RecordSinkFunc(func(context.Context, *enforcement.Record) error { return errors.New("down") })
	for _, tc := range []struct {
		name string
		sink enforcement.RecordSink
		want int
	}{
		{"framing", NewWriter(&bytes.Buffer{}), 1},
		{"write", NewWriter(failWriter{}), 3},
		{"record by record", failing, 3},
		{"fanned out", Fanout{NewWriter(&bytes.Buffer{}), failing}, 3},
	} {
		err := WriteAttributedBatch(context.Background(), tc.sink, recs, Attribution{})
		if got := enforcement.FailedRecords(err, len(recs)); got != tc.want {
			t.Errorf("%s: %d records lost (%v), want %d", tc.name, got, err, tc.want)
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
