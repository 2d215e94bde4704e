package records

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// DefaultMaxFiles is how many rotated files a rotating JSONL sink keeps
// when JSONLOptions.MaxFiles is 0.
const DefaultMaxFiles = 10

// JSONLOptions configures a JSONL sink.
type JSONLOptions struct {
	// MaxBytes rotates the file before a record would take it past this
	// size; 0 never rotates. A record larger than MaxBytes gets a file of
	// its own: records are never split.
	MaxBytes int64
	// MaxFiles is how many rotated files to keep (path.1 newest … path.N
	// oldest); older ones are removed. 0 means DefaultMaxFiles. Unused
	// without MaxBytes.
	MaxFiles int
	// Framing is the line format and policy markers; a rotated file
	// starts with the current marker.
	Framing Framing
}

// JSONL is a sink appending one JSON record per line to a file, optionally
// rotating it by size. Records are written with one write(2) each (a
// batch with one for all), under a lock that rotation also holds, so no
// line is ever torn or split across files, and every record written lands
// in exactly one file. Rotation
// renames path.(N-1) → path.N … path → path.1 and reopens path.
//
// The sink assumes it is the file's only writer: the size it rotates at is
// counted from what it wrote since opening (plus the size it found), so do
// not combine it with external rotation (logrotate's copytruncate).
type JSONL struct {
	fr       framer
	path     string
	maxBytes int64
	maxFiles int

	mu   sync.Mutex
	f    *os.File // nil once closed
	size int64
}

// OpenJSONL appends records to the file at path, creating it (0600) when
// absent.
func OpenJSONL(path string, opts JSONLOptions) (*JSONL, error) {
	if opts.MaxBytes < 0 || opts.MaxFiles < 0 {
		return nil, fmt.Errorf("records: jsonl %s: negative rotation bounds", path)
	}
	// write is done with a line when it returns: the framer reuses it.
	s := &JSONL{fr: framer{f: opts.Framing, reuse: true}, path: path, maxBytes: opts.MaxBytes, maxFiles: opts.MaxFiles}
	if s.maxFiles == 0 {
		s.maxFiles = DefaultMaxFiles
	}
	f, size, err := openAppend(path)
	if err != nil {
		return nil, err
	}
	s.f, s.size = f, size
	return s, nil
}

// openAppend opens path for appending and returns its current size.
func openAppend(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("records: open %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("records: stat %s: %w", path, err)
	}
	return f, st.Size(), nil
}

// Path returns the file the sink appends to.
func (s *JSONL) Path() string { return s.path }

// WriteRecord appends r as one line, rotating first when the line would
// take the file past MaxBytes. A failed rotation is reported, but the
// record is still appended to the current file rather than lost; the next
// write retries the rotation.
func (s *JSONL) WriteRecord(ctx context.Context, r *enforcement.Record) error {
	return s.fr.emit(ctx, r, s.write)
}

// WriteAttributed is WriteRecord with the attribution given (records.AttributedSink).
func (s *JSONL) WriteAttributed(ctx context.Context, r *enforcement.Record, a Attribution) error {
	return s.fr.emitAs(ctx, r, a, s.write)
}

// WriteAttributedBatch appends rs with one write (records.AttributedBatchSink).
func (s *JSONL) WriteAttributedBatch(ctx context.Context, rs []*enforcement.Record, a Attribution) error {
	return s.fr.emitBatch(ctx, rs, a, s.write)
}

// MarkPolicy writes a policy marker for version when one is due.
func (s *JSONL) MarkPolicy(ctx context.Context, version string) error {
	return s.fr.markPolicy(ctx, version, s.write)
}

// write appends b, whole lines, with one write. A file opened by rotation
// starts with the current policy marker: b's own when it begins with one.
func (s *JSONL) write(_ context.Context, b []byte, marker bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return ErrClosed
	}
	var rotErr error
	if s.maxBytes > 0 && s.size > 0 && s.size+int64(len(b)) > s.maxBytes {
		if rotErr = s.rotate(); rotErr == nil && !marker {
			if m := s.fr.current(); m != nil {
				b = append(m[:len(m):len(m)], b...)
			}
		}
	}
	n, err := s.f.Write(b)
	if err != nil {
		// Take a partial line back out, so the file holds whole records
		// only (best effort: the disk may be full or gone).
		if n > 0 {
			_ = s.f.Truncate(s.size)
		}
		return errors.Join(rotErr, fmt.Errorf("records: write %s: %w", s.path, err))
	}
	s.size += int64(n)
	return rotErr
}

// rotate shifts the rotated files up by one, moves the live file to
// path.1 and opens a fresh one. The caller holds s.mu. Renames of files
// that do not exist are skipped, so a rotation interrupted by an error can
// be retried.
func (s *JSONL) rotate() error {
	for i := s.maxFiles - 1; i >= 1; i-- {
		if err := renameIfExists(s.rotated(i), s.rotated(i+1)); err != nil {
			return err
		}
	}
	if err := renameIfExists(s.path, s.rotated(1)); err != nil {
		return err
	}
	f, size, err := openAppend(s.path)
	if err != nil {
		// Keep appending to the renamed file: late is better than lost.
		return fmt.Errorf("records: rotate: %w", err)
	}
	old := s.f
	s.f, s.size = f, size
	if err := old.Close(); err != nil {
		return fmt.Errorf("records: rotate: close %s: %w", s.rotated(1), err)
	}
	return nil
}

func (s *JSONL) rotated(i int) string { return s.path + "." + strconv.Itoa(i) }

func renameIfExists(from, to string) error {
	if err := os.Rename(from, to); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("records: rotate: %w", err)
	}
	return nil
}

// Close closes the file. Later writes return ErrClosed.
func (s *JSONL) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	if err != nil {
		return fmt.Errorf("records: close %s: %w", s.path, err)
	}
	return nil
}
