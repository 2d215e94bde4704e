// Package records delivers interception records to audit sinks. Every sink
// writes the payload-free §10.3 projection (enforcement.Record's JSON), one
// JSON object per line, so no target content can reach a sink by
// construction.
package records

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Writer is a sink that writes one JSON record per line to w. Writes are
// serialized; each record is flushed before WriteRecord returns, so a
// crash loses at most the record being written.
type Writer struct {
	mu sync.Mutex
	w  *bufio.Writer
	c  io.Closer
}

// NewWriter returns a sink writing to w (for example os.Stdout).
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10)}
}

// OpenJSONL appends records to the file at path, creating it (0600) when
// absent.
func OpenJSONL(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("records: open %s: %w", path, err)
	}
	w := NewWriter(f)
	w.c = f
	return w, nil
}

// WriteRecord appends r as one line.
func (s *Writer) WriteRecord(_ context.Context, r *enforcement.Record) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return fmt.Errorf("records: marshal: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.Write(b)
	s.w.WriteByte('\n')
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("records: write: %w", err)
	}
	return nil
}

// Close flushes and closes the underlying file, if the sink owns one.
func (s *Writer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.w.Flush()
	if s.c != nil {
		err = errors.Join(err, s.c.Close())
	}
	return err
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
