package enforcement

import (
	"context"
	"errors"
	"sync"
	"time"
)

// RecordBatchSink is a RecordSink that can take several records in one
// call, for example to write them to a file with one write(2). A
// HeldRecords flush uses it when the emitter's sink has it.
type RecordBatchSink interface {
	RecordSink
	// WriteRecords writes rs in order, as WriteRecord would one by one.
	// rs is the caller's again once it returns: a sink keeps the records,
	// not the slice.
	WriteRecords(ctx context.Context, rs []*Record) error
}

// BatchWriteError is the error of a batch write that lost only some of
// its records: Failed of them.
type BatchWriteError struct {
	Failed int
	Err    error
}

func (e *BatchWriteError) Error() string { return e.Err.Error() }
func (e *BatchWriteError) Unwrap() error { return e.Err }

// FailedRecords is how many of a batch of n records a write that returned
// err lost: none without an error, BatchWriteError.Failed when it says,
// else all of them.
func FailedRecords(err error, n int) int {
	if err == nil {
		return 0
	}
	if be, ok := errors.AsType[*BatchWriteError](err); ok {
		return min(be.Failed, n)
	}
	return n
}

// HeldRecords holds back the records of one exchange so that each sink
// takes them in one call: the emissions run as usual (verdicts, metrics
// and the record buffer are not delayed), but their records reach the
// sink when Flush runs. The host flushes before the exchange has any
// effect (before the request goes upstream, before the answer goes to the
// client), so a record still reaches the operating system before what it
// allowed happens; a crash before a flush loses only records of
// emissions whose effect never happened.
//
// Only the emissions whose context carries it (HeldRecordsKey) are held,
// and only while it is holding: from Start until Flush, and again after
// Hold. The zero value is ready for Start; a host keeps it in an
// allocation it makes per request anyway, and the first records of a
// request take no allocation of their own.
type HeldRecords struct {
	// flushing serializes flushes, so that a Flush returns only once every
	// record held before it was written, whichever goroutine wrote it.
	flushing sync.Mutex

	mu      sync.Mutex
	holding bool
	writing bool            // a Flush is writing from recs' array
	ctx     detachedContext // the sinks' context
	recs    []*Record
	ems     []*Emitter // the emitter whose sink takes recs[i]
	recBuf  [8]*Record
	emBuf   [8]*Emitter
}

// HeldRecordsKey is the context key HeldRecordsFrom looks up. A host sets
// it with WithHeldRecords, or answers it from the Value method of its own
// request context type.
type HeldRecordsKey struct{}

// WithHeldRecords starts h with ctx and returns ctx carrying it.
func WithHeldRecords(ctx context.Context, h *HeldRecords) context.Context {
	h.Start(ctx)
	return context.WithValue(ctx, HeldRecordsKey{}, h)
}

// HeldRecordsFrom returns the HeldRecords ctx carries, or nil (whose
// methods do nothing).
func HeldRecordsFrom(ctx context.Context) *HeldRecords {
	h, _ := ctx.Value(HeldRecordsKey{}).(*HeldRecords)
	return h
}

// Start makes h hold; its records are written with ctx, detached from its
// cancellation (a client that goes away does not stop its records).
func (h *HeldRecords) Start(ctx context.Context) {
	h.mu.Lock()
	h.ctx.parent = ctx
	h.holding = true
	h.mu.Unlock()
}

// detachedContext is its parent's values without its cancellation or
// deadline, as context.WithoutCancel's, kept inside the HeldRecords so
// that it takes no allocation of its own. A context derived from it never
// attaches to the parent's cancellation: its Done is nil.
type detachedContext struct{ parent context.Context }

func (c *detachedContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *detachedContext) Done() <-chan struct{}       { return nil }
func (c *detachedContext) Err() error                  { return nil }
func (c *detachedContext) Value(key any) any           { return c.parent.Value(key) }

// Hold makes h hold the records delivered from now until the next Flush.
func (h *HeldRecords) Hold() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.holding = h.ctx.parent != nil // never started: nothing would write them
	h.mu.Unlock()
}

// add keeps rec for e's sink when h is holding, and reports whether it did.
func (h *HeldRecords) add(e *Emitter, rec *Record) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holding {
		return false
	}
	if h.recs == nil && !h.writing {
		h.recs, h.ems = h.recBuf[:0], h.emBuf[:0]
	}
	h.recs, h.ems = append(h.recs, rec), append(h.ems, e)
	return true
}

// Flush stops holding and hands the held records to their sinks, in
// emission order: the consecutive records of one emitter in one call. It
// returns once they, and those of any Flush running at the same time, are
// written. Sink failures are counted like those of any record
// (Emitter.SinkFailures).
func (h *HeldRecords) Flush() {
	if h == nil {
		return
	}
	h.flushing.Lock()
	defer h.flushing.Unlock()
	h.mu.Lock()
	recs, ems := h.recs, h.ems
	h.recs, h.ems, h.holding = nil, nil, false
	h.writing = len(recs) > 0
	h.mu.Unlock()
	if len(recs) == 0 {
		return
	}
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && ems[j] == ems[i] {
			j++
		}
		ems[i].writeHeld(&h.ctx, recs[i:j])
		i = j
	}
	clear(recs) // the records are the sinks' now: do not keep them alive
	clear(ems)
	h.mu.Lock()
	h.writing = false
	h.mu.Unlock()
}

// writePast writes rec, which h did not hold, to e's sink once no Flush of
// h is writing: the records a Flush took were emitted first and must reach
// the sinks first. With a nil h it writes at once.
func (h *HeldRecords) writePast(e *Emitter, ctx context.Context, rec *Record) {
	if h != nil {
		h.flushing.Lock()
		defer h.flushing.Unlock()
	}
	e.writeSink(ctx, rec)
}

// writeHeld writes records a HeldRecords kept for e's sink: in one call
// when the sink takes batches, else one by one.
func (e *Emitter) writeHeld(ctx context.Context, rs []*Record) {
	bs, ok := e.sink.(RecordBatchSink)
	if !ok {
		for _, r := range rs {
			e.writeSink(ctx, r)
		}
		return
	}
	defer func() {
		if recover() != nil {
			e.sinkErr.Add(int64(len(rs)))
		}
	}()
	if failed := FailedRecords(bs.WriteRecords(ctx, rs), len(rs)); failed > 0 {
		e.sinkErr.Add(int64(failed))
	}
}
