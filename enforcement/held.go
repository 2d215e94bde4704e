package enforcement

import (
	"context"
	"sync"
)

// RecordBatchSink is a RecordSink that can take several records in one
// call, for example to write them to a file with one write(2). A
// HeldRecords flush uses it when the emitter's sink has it.
type RecordBatchSink interface {
	RecordSink
	// WriteRecords writes rs in order, as WriteRecord would one by one.
	WriteRecords(ctx context.Context, rs []*Record) error
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
// Only the emissions whose context carries it (WithHeldRecords) are held,
// and only while it is holding: it holds from its creation until Flush,
// and again after Hold.
type HeldRecords struct {
	mu      sync.Mutex
	holding bool
	recs    []heldRecord
}

// heldRecord is a record and the emitter whose sink takes it.
type heldRecord struct {
	e *Emitter
	r *Record
}

type heldKey struct{}

// WithHeldRecords returns ctx carrying h and makes h hold. h is
// typically part of a per-request allocation the host already makes.
func WithHeldRecords(ctx context.Context, h *HeldRecords) context.Context {
	h.Hold()
	return context.WithValue(ctx, heldKey{}, h)
}

// HeldRecordsFrom returns the HeldRecords ctx carries, or nil (whose
// methods do nothing).
func HeldRecordsFrom(ctx context.Context) *HeldRecords {
	h, _ := ctx.Value(heldKey{}).(*HeldRecords)
	return h
}

// Hold makes h hold the records delivered from now until the next Flush.
func (h *HeldRecords) Hold() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.holding = true
	h.mu.Unlock()
}

// add keeps rec for e's sink when h is holding, and reports whether it did.
func (h *HeldRecords) add(e *Emitter, rec *Record) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holding {
		return false
	}
	h.recs = append(h.recs, heldRecord{e: e, r: rec})
	return true
}

// Flush stops holding and hands the held records to their sinks, in
// emission order: the consecutive records of one emitter in one call.
// Sink failures are counted like those of any record (Emitter.SinkFailures).
func (h *HeldRecords) Flush(ctx context.Context) {
	if h == nil {
		return
	}
	h.mu.Lock()
	held := h.recs
	h.recs, h.holding = nil, false
	h.mu.Unlock()
	if len(held) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	var batch [8]*Record
	for i := 0; i < len(held); {
		e, j := held[i].e, i
		rs := batch[:0]
		for ; j < len(held) && held[j].e == e; j++ {
			rs = append(rs, held[j].r)
		}
		e.writeHeld(ctx, rs)
		i = j
	}
	clear(held) // the records are the sinks' now; do not keep them alive
	h.mu.Lock()
	if h.recs == nil {
		h.recs = held[:0] // reuse the array for the next hold
	}
	h.mu.Unlock()
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
	if err := bs.WriteRecords(ctx, rs); err != nil {
		e.sinkErr.Add(int64(len(rs)))
	}
}
