package enforcement

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
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
		h.Flush()
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
		h.Flush()
		h.Flush() // nothing left
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
	nilHeld.Flush()
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
		want int64
	}{
		{"error", &batchSink{fail: errors.New("disk full")}, 2},
		{"panic", &batchSink{panic: true}, 2},
		{"one record lost", &batchSink{fail: &BatchWriteError{Failed: 1, Err: errors.New("unmarshalable evidence")}}, 1},
	} {
		e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: tc.sink})
		b := newTestBuilder()
		var h HeldRecords
		ctx := WithHeldRecords(context.Background(), &h)
		emitSeq(t, ctx, e, b)
		emitSeq(t, ctx, e, b)
		h.Flush()
		if got := e.SinkFailures(); got != tc.want {
			t.Errorf("%s: SinkFailures %d, want %d", tc.name, got, tc.want)
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
	h.Flush()
	if want := [][]int64{{0}, {3}}; !slices.EqualFunc(s1.calls, want, slices.Equal) {
		t.Errorf("first emitter's sink: %v, want %v", s1.calls, want)
	}
	if want := [][]int64{{1, 2}}; !slices.EqualFunc(s2.calls, want, slices.Equal) {
		t.Errorf("second emitter's sink: %v, want %v", s2.calls, want)
	}
}

// Holding and flushing add no allocation to the emissions themselves: the
// first records live in the HeldRecords, and the sinks get slices of it.
func TestHeldRecordsAllocateNothing(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation count (the race detector changes it)")
	}
	singles, batches, batched := 0, 0, 0
	sink := RecordSinkFunc(func(context.Context, *Record) error { singles++; return nil })
	batch := struct {
		RecordSink
		batchFunc
	}{sink, func(_ context.Context, rs []*Record) error { batches, batched = batches+1, batched+len(rs); return nil }}
	e := newTestEmitter(t, Options{Interceptors: []Registration{{Interceptor: readsOnlyAllow{}}}, Sink: batch})
	c := buildAt(t, newTestBuilder(), AgentShutdown)
	var h HeldRecords
	ctx := WithHeldRecords(context.Background(), &h)
	held := testing.AllocsPerRun(100, func() {
		h.Hold()
		for range 6 {
			if _, err := e.EmitUnchecked(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		h.Flush()
	})
	// The held runs did hold: every record went in one batch per run.
	if singles != 0 || batches != 101 || batched != 6*101 {
		t.Fatalf("held runs: %d single writes, %d batches of %d records; want 0, 101 of 606", singles, batches, batched)
	}
	direct := testing.AllocsPerRun(100, func() {
		for range 6 {
			if _, err := e.EmitUnchecked(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}
	})
	if held > direct {
		t.Errorf("six held emissions and a flush: %.1f allocations; six written at once: %.1f", held, direct)
	}
}

// batchFunc gives a test sink WriteRecords.
type batchFunc func(context.Context, []*Record) error

func (f batchFunc) WriteRecords(ctx context.Context, rs []*Record) error { return f(ctx, rs) }

// Concurrent holds, emissions and flushes lose no record and write none
// twice, and a Flush returns only once what was held before it is
// written, even by another goroutine's Flush (run with -race).
func TestHeldRecordsConcurrentFlushes(t *testing.T) {
	var mu sync.Mutex
	written := map[*Record]int{}
	rec := struct {
		RecordSink
		batchFunc
	}{RecordSinkFunc(func(_ context.Context, r *Record) error {
		mu.Lock()
		written[r]++
		mu.Unlock()
		return nil
	}), func(_ context.Context, rs []*Record) error {
		mu.Lock()
		for _, r := range rs {
			written[r]++
		}
		mu.Unlock()
		return nil
	}}
	e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: rec})
	c := buildAt(t, newTestBuilder(), AgentShutdown)
	var h HeldRecords
	ctx := WithHeldRecords(context.Background(), &h)
	var wg sync.WaitGroup
	var emitted sync.Map
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if g%2 == 0 {
					h.Hold()
				}
				out, err := e.EmitUnchecked(ctx, c)
				if err != nil {
					t.Error(err)
					return
				}
				emitted.Store(out.Record, true)
				if i%3 == g%3 {
					h.Flush()
					mu.Lock()
					n := written[out.Record]
					mu.Unlock()
					if n != 1 {
						t.Errorf("a record emitted before Flush was written %d times when it returned", n)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	h.Flush()
	n := 0
	emitted.Range(func(k, _ any) bool {
		n++
		if got := written[k.(*Record)]; got != 1 {
			t.Errorf("a record written %d times", got)
		}
		return true
	})
	if n != 800 || len(written) != 800 {
		t.Errorf("%d emitted, %d written; want 800 each", n, len(written))
	}
}

// The sinks get the holding context's values but not its cancellation: a
// request that ended (client gone) still has its records written.
func TestHeldRecordsSinkContextDetached(t *testing.T) {
	type key struct{}
	var got []context.Context
	sink := struct {
		RecordSink
		batchFunc
	}{RecordSinkFunc(func(ctx context.Context, _ *Record) error { got = append(got, ctx); return nil }),
		func(ctx context.Context, _ []*Record) error { got = append(got, ctx); return nil }}
	e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: sink})
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	var h HeldRecords
	ctx := WithHeldRecords(parent, &h)
	emitSeq(t, ctx, e, newTestBuilder())
	cancel()
	h.Flush()
	if len(got) != 1 {
		t.Fatalf("%d sink calls, want 1", len(got))
	}
	sc := got[0]
	if sc.Err() != nil || sc.Done() != nil {
		t.Errorf("the sink's context is canceled with the request's: Err %v", sc.Err())
	}
	if _, ok := sc.Deadline(); ok {
		t.Error("the sink's context has a deadline")
	}
	if sc.Value(key{}) != "v" {
		t.Error("the sink's context lost the request's values")
	}
	child, stop := context.WithTimeout(sc, time.Hour)
	defer stop()
	if child.Err() != nil {
		t.Error("a context derived from the sink's is canceled")
	}
}

// gateSink blocks each write until release is closed.
type gateSink struct {
	entered chan struct{}
	release chan struct{}
}

func (s gateSink) WriteRecord(context.Context, *Record) error {
	s.entered <- struct{}{}
	<-s.release
	return nil
}

// A Flush returns only once the records held before it are the sinks':
// a Flush that finds nothing held because another goroutine's Flush (a
// keep-alive write) took them waits for that one to finish, so the
// caller's effect (the request upstream, the answer's bytes) cannot pass
// records still being written.
func TestHeldRecordsFlushWaitsForConcurrentFlush(t *testing.T) {
	sink := gateSink{entered: make(chan struct{}), release: make(chan struct{})}
	e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: sink})
	var h HeldRecords
	ctx := WithHeldRecords(context.Background(), &h)
	emitSeq(t, ctx, e, newTestBuilder())

	first := make(chan struct{})
	go func() {
		defer close(first)
		h.Flush()
	}()
	<-sink.entered // the first Flush is writing the record

	second := make(chan struct{})
	go func() {
		defer close(second)
		h.Flush()
	}()
	select {
	case <-second:
		t.Fatal("a Flush returned while the records it had to wait for were still being written")
	case <-time.After(50 * time.Millisecond):
	}
	close(sink.release)
	<-first
	<-second
}

// orderSink records the sequence numbers it is given, in the order its
// writes complete; the first write blocks until release is closed.
type orderSink struct {
	mu      sync.Mutex
	seqs    []int64
	entered chan struct{}
	release chan struct{}
}

func (s *orderSink) WriteRecord(_ context.Context, r *Record) error {
	s.mu.Lock()
	first := len(s.seqs) == 0 && s.entered != nil
	s.mu.Unlock()
	if first {
		close(s.entered)
		<-s.release
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seqs = append(s.seqs, r.Sequence)
	return nil
}

// A record emitted while a Flush is writing (a parallel emission, after
// the hold ended) is written after the records that Flush took: the
// sinks get them in emission order.
func TestHeldRecordsDirectWriteWaitsForFlush(t *testing.T) {
	sink := &orderSink{entered: make(chan struct{}), release: make(chan struct{})}
	e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, Sink: sink})
	var h HeldRecords
	ctx := WithHeldRecords(context.Background(), &h)
	b := newTestBuilder()
	emitSeq(t, ctx, e, b) // sequence 0, held
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		h.Flush()
	}()
	<-sink.entered // the Flush is writing sequence 0
	direct := make(chan struct{})
	go func() {
		defer close(direct)
		if _, err := e.EmitUnchecked(ctx, buildAt(t, b, Input)); err != nil { // sequence 1, not held
			t.Error(err)
		}
	}()
	select {
	case <-direct:
		t.Fatal("a record was written past the records a Flush was still writing")
	case <-time.After(50 * time.Millisecond):
	}
	close(sink.release)
	<-flushed
	<-direct
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.seqs) != 2 || sink.seqs[0] != 0 || sink.seqs[1] != 1 {
		t.Errorf("sink got sequences %v, want [0 1]", sink.seqs)
	}
}
