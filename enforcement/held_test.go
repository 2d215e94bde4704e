package enforcement

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// batchSink records its calls: the sequence numbers of each call's records.
type batchSink struct {
	mu    sync.Mutex
	calls [][]int64
	fail  error
	panic bool
}

func (s *batchSink) WriteRecord(ctx context.Context, r *Record) error {
	return s.WriteRecords(ctx, []*Record{r})
}

func (s *batchSink) WriteRecords(_ context.Context, rs []*Record) error {
	if s.panic {
		panic("sink")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	call := make([]int64, len(rs))
	for i, r := range rs {
		call[i] = r.Sequence
	}
	s.calls = append(s.calls, call)
	return s.fail
}

// plainSink takes one record per call (no WriteRecords).
type plainSink struct{ calls *batchSink }

func (s plainSink) WriteRecord(ctx context.Context, r *Record) error {
	return s.calls.WriteRecords(ctx, []*Record{r})
}

func emitSeq(t *testing.T, ctx context.Context, e *Emitter, b *Builder) {
	t.Helper()
	if _, err := e.EmitUnchecked(ctx, buildAt(t, b, AgentStartup)); err != nil {
		t.Fatal(err)
	}
}

// HeldRecords: records of emissions carrying it reach the sink only at
// Flush, in order, in one call for a batch sink and one per record
// otherwise; Flush stops holding until Hold; the record buffer is not
// delayed; a nil HeldRecords does nothing.
func TestHeldRecords(t *testing.T) {
	for _, batching := range []bool{true, false} {
		bs := &batchSink{}
		var sink RecordSink = bs
		if !batching {
			sink = plainSink{calls: bs}
		}
		e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: sink, RecordBuffer: 16})
		b := newTestBuilder()
		var h HeldRecords
		ctx := WithHeldRecords(context.Background(), &h)
		for range 3 {
			emitSeq(t, ctx, e, b)
		}
		if len(bs.calls) != 0 {
			t.Fatalf("batching %v: sink called while holding: %v", batching, bs.calls)
		}
		if n := len(e.TakeRecords()); n != 3 {
			t.Errorf("batching %v: the record buffer has %d records while they are held, want 3", batching, n)
		}
		h.Flush(ctx)
		want := [][]int64{{0, 1, 2}}
		if !batching {
			want = [][]int64{{0}, {1}, {2}}
		}
		if !slices.EqualFunc(bs.calls, want, slices.Equal) {
			t.Errorf("batching %v: calls after Flush %v, want %v", batching, bs.calls, want)
		}
		emitSeq(t, ctx, e, b) // not holding: written at once
		want = append(want, []int64{3})
		if !slices.EqualFunc(bs.calls, want, slices.Equal) {
			t.Errorf("batching %v: an emission after Flush was held: %v", batching, bs.calls)
		}
		h.Hold()
		emitSeq(t, ctx, e, b)
		emitSeq(t, ctx, e, b)
		h.Flush(ctx)
		h.Flush(ctx) // nothing left
		if batching {
			want = append(want, []int64{4, 5})
		} else {
			want = append(want, []int64{4}, []int64{5})
		}
		if !slices.EqualFunc(bs.calls, want, slices.Equal) {
			t.Errorf("batching %v: after Hold: %v, want %v", batching, bs.calls, want)
		}
	}
	var nilHeld *HeldRecords
	nilHeld.Hold()
	nilHeld.Flush(context.Background())
	if HeldRecordsFrom(context.Background()) != nil {
		t.Error("a plain context carries HeldRecords")
	}
}

// A failing or panicking batch counts every record in it as a sink
// failure, as record-by-record writes would.
func TestHeldRecordsSinkFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		sink *batchSink
	}{
		{"error", &batchSink{fail: errors.New("disk full")}},
		{"panic", &batchSink{panic: true}},
	} {
		e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: tc.sink})
		b := newTestBuilder()
		var h HeldRecords
		ctx := WithHeldRecords(context.Background(), &h)
		emitSeq(t, ctx, e, b)
		emitSeq(t, ctx, e, b)
		h.Flush(ctx)
		if got := e.SinkFailures(); got != 2 {
			t.Errorf("%s: SinkFailures %d, want 2", tc.name, got)
		}
	}
}

// Records held for two emitters go to each one's sink, in order.
func TestHeldRecordsTwoEmitters(t *testing.T) {
	s1, s2 := &batchSink{}, &batchSink{}
	e1 := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: s1})
	e2 := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: s2})
	b := newTestBuilder()
	var h HeldRecords
	ctx := WithHeldRecords(context.Background(), &h)
	emitSeq(t, ctx, e1, b) // 0
	emitSeq(t, ctx, e2, b) // 1
	emitSeq(t, ctx, e2, b) // 2
	emitSeq(t, ctx, e1, b) // 3
	h.Flush(ctx)
	if want := [][]int64{{0}, {3}}; !slices.EqualFunc(s1.calls, want, slices.Equal) {
		t.Errorf("first emitter's sink: %v, want %v", s1.calls, want)
	}
	if want := [][]int64{{1, 2}}; !slices.EqualFunc(s2.calls, want, slices.Equal) {
		t.Errorf("second emitter's sink: %v, want %v", s2.calls, want)
	}
}
