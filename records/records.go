// Package records delivers interception records to audit sinks and checks
// the trails they leave.
//
// Every sink writes the payload-free §10.3 projection (enforcement.Record's
// JSON) and nothing else, so no target content can reach a sink by
// construction:
//
//   - Writer: one JSON record per line to an io.Writer (stdout);
//   - JSONL: one JSON record per line appended to a file, with optional
//     size-based rotation;
//   - RedisStream: one XADD per record to a Redis stream, capped with
//     MAXLEN ~ N;
//   - HTTP: batched NDJSON POSTs from a bounded in-memory queue, so the
//     request path never waits on the receiver.
//
// Verifier (and VerifyFiles, behind "hooks-gateway records verify") reads
// JSONL trails back and checks every session's sequence numbers.
package records

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// ErrClosed is returned by WriteRecord after the sink was closed.
var ErrClosed = errors.New("records: sink closed")

// Dropper is implemented by sinks that can lose records without failing
// the WriteRecord call that accepted them (HTTP). Dropped is a monotonic
// count, suitable for a Prometheus counter read at scrape time.
type Dropper interface {
	Dropped() int64
}

// Writer is a sink that writes one JSON record per line to w. Writes are
// serialized; each record is flushed before WriteRecord returns, so a
// crash loses at most the record being written.
type Writer struct {
	fr framer
	mu sync.Mutex
	w  *bufio.Writer
}

// NewWriter returns a sink writing bare records to w (for example
// os.Stdout). Closing it flushes; it never closes w.
func NewWriter(w io.Writer) *Writer {
	return NewFramedWriter(w, Framing{})
}

// NewFramedWriter returns a sink writing to w framed by f.
func NewFramedWriter(w io.Writer, f Framing) *Writer {
	// write is done with a line when it returns: the framer reuses it.
	return &Writer{fr: framer{f: f, reuse: true}, w: bufio.NewWriterSize(w, 64<<10)}
}

// WriteRecord appends r as one line (after a policy marker when one is
// due).
func (s *Writer) WriteRecord(ctx context.Context, r *enforcement.Record) error {
	return s.fr.emit(ctx, r, s.write)
}

// WriteAttributed is WriteRecord with the attribution given (records.AttributedSink).
func (s *Writer) WriteAttributed(ctx context.Context, r *enforcement.Record, a Attribution) error {
	return s.fr.emitAs(ctx, r, a, s.write)
}

// WriteAttributedBatch writes rs and flushes once (records.AttributedBatchSink).
func (s *Writer) WriteAttributedBatch(ctx context.Context, rs []*enforcement.Record, a Attribution) error {
	return s.fr.emitBatch(ctx, rs, a, s.write)
}

// MarkPolicy writes a policy marker for version when one is due.
func (s *Writer) MarkPolicy(ctx context.Context, version string) error {
	return s.fr.markPolicy(ctx, version, s.write)
}

func (s *Writer) write(_ context.Context, b []byte, _ bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.w.Write(b) // a bufio.Writer's error is sticky: Flush reports it
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("records: write: %w", err)
	}
	return nil
}

// Close flushes buffered output.
func (s *Writer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("records: flush: %w", err)
	}
	return nil
}

// Fanout delivers each record to every sink; a failing sink does not stop
// the others, and their errors are joined.
type Fanout []enforcement.RecordSink

// WriteRecord writes r to every sink.
func (f Fanout) WriteRecord(ctx context.Context, r *enforcement.Record) error {
	var errs []error
	for _, s := range f {
		if err := s.WriteRecord(ctx, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// WriteAttributedBatch writes rs to every sink with attribution a
// (WriteAttributedBatch); a failing sink does not stop the others.
func (f Fanout) WriteAttributedBatch(ctx context.Context, rs []*enforcement.Record, a Attribution) error {
	var errs []error
	failed := 0 // a record is lost when a sink lost it
	for _, s := range f {
		if err := WriteAttributedBatch(ctx, s, rs, a); err != nil {
			errs = append(errs, err)
			failed = max(failed, enforcement.FailedRecords(err, len(rs)))
		}
	}
	return batchError(errs, failed)
}

// WriteAttributed writes r to every sink with attribution a
// (AttributedSink), in a context made once for those without
// WriteAttributed.
func (f Fanout) WriteAttributed(ctx context.Context, r *enforcement.Record, a Attribution) error {
	var errs []error
	var withA context.Context
	for _, s := range f {
		var err error
		if as, ok := s.(AttributedSink); ok {
			err = as.WriteAttributed(ctx, r, a)
		} else {
			if withA == nil {
				withA = WithAttribution(ctx, a)
			}
			err = s.WriteRecord(withA, r)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
