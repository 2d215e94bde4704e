package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Format is how a sink frames the records it writes.
type Format string

// Formats.
const (
	// FormatRecord writes each record as it is: a line the spec's closed
	// record schema accepts. With markers on, a policy marker line comes
	// before the first record of each policy version.
	FormatRecord Format = "record"
	// FormatEnvelope wraps each record with the policy version and route
	// that produced it (Envelope), for sinks shared by several replicas
	// where a marker line could not say which records it covers.
	FormatEnvelope Format = "envelope"
)

// MarkerKey is the one member of a policy marker line.
const MarkerKey = "hooks_gateway_policy"

// Marker is what a policy marker line says: the records after it, up to
// the next marker, were produced under policy Version. Timestamp is when
// the sink wrote it (RFC 3339, UTC).
//
//	{"hooks_gateway_policy":{"version":"sha256:…","timestamp":"…"}}
type Marker struct {
	Version   string `json:"version"`
	Timestamp string `json:"timestamp"`
}

// EnvelopeKey is the envelope's member holding the attribution.
const EnvelopeKey = "hooks_gateway"

// Envelope is a line of the envelope format.
//
//	{"record":{…},"hooks_gateway":{"policy_version":"sha256:…","route":"…"}}
type Envelope struct {
	Record       json.RawMessage `json:"record"`
	HooksGateway Attribution     `json:"hooks_gateway"`
}

// Attribution names what produced a record: the policy version, and the
// route whose chain ran ("" for the default chain).
type Attribution struct {
	PolicyVersion string `json:"policy_version"`
	Route         string `json:"route,omitempty"`
}

type attributionKey struct{}

// WithAttribution returns ctx carrying a, for the sinks below an
// Attributed sink to read: metrics and fan-out wrappers pass it through.
func WithAttribution(ctx context.Context, a Attribution) context.Context {
	return context.WithValue(ctx, attributionKey{}, a)
}

// AttributionFrom returns the attribution ctx carries, or the zero one.
func AttributionFrom(ctx context.Context) Attribution {
	a, _ := ctx.Value(attributionKey{}).(Attribution)
	return a
}

// Attributed returns a sink passing every record to sink with a in its
// context: give each emitter its own, naming its policy and route.
func Attributed(sink enforcement.RecordSink, a Attribution) enforcement.RecordSink {
	if sink == nil {
		return nil
	}
	if as, ok := sink.(AttributedSink); ok {
		return attributedSink{sink: as, a: a}
	}
	var boxed any = a // boxed once, not per record
	return enforcement.RecordSinkFunc(func(ctx context.Context, r *enforcement.Record) error {
		return sink.WriteRecord(context.WithValue(ctx, attributionKey{}, boxed), r)
	})
}

// AttributedSink is a sink that takes a record's attribution as an
// argument: Attributed then calls WriteAttributed instead of WriteRecord,
// sparing a context per record. WriteAttributed(ctx, r, a) must do what
// WriteRecord(WithAttribution(ctx, a), r) does; a wrapper passes a on
// (to a wrapped AttributedSink, else in the context). All sinks of this
// package, and Fanout, implement it.
type AttributedSink interface {
	enforcement.RecordSink
	WriteAttributed(ctx context.Context, r *enforcement.Record, a Attribution) error
}

// attributedSink is Attributed's sink over an AttributedSink: it passes the
// attribution as an argument, and takes batches (a HeldRecords flush).
type attributedSink struct {
	sink AttributedSink
	a    Attribution
}

// WriteRecord writes r with the sink's attribution.
func (s attributedSink) WriteRecord(ctx context.Context, r *enforcement.Record) error {
	return s.sink.WriteAttributed(ctx, r, s.a)
}

// WriteRecords writes rs with the sink's attribution, in one call when
// the sink below takes batches (enforcement.RecordBatchSink).
func (s attributedSink) WriteRecords(ctx context.Context, rs []*enforcement.Record) error {
	return WriteAttributedBatch(ctx, s.sink, rs, s.a)
}

// AttributedBatchSink is an AttributedSink that writes several records at
// once: WriteAttributedBatch(ctx, rs, a) must do what WriteAttributed does
// for each of rs in order, and the file sinks write them with one
// write(2). Fanout, Writer, JSONL and RedisStream implement it (HTTP
// does not: its records go one by one); a wrapper passes the batch on
// with WriteAttributedBatch. A write that loses only some of the records
// says how many with an *enforcement.BatchWriteError.
type AttributedBatchSink interface {
	AttributedSink
	WriteAttributedBatch(ctx context.Context, rs []*enforcement.Record, a Attribution) error
}

// WriteAttributedBatch writes rs to sink with attribution a: in one call
// when sink is an AttributedBatchSink, else record by record
// (WriteAttributed), the errors joined.
func WriteAttributedBatch(ctx context.Context, sink enforcement.RecordSink, rs []*enforcement.Record, a Attribution) error {
	if bs, ok := sink.(AttributedBatchSink); ok {
		return bs.WriteAttributedBatch(ctx, rs, a)
	}
	var errs []error
	for _, r := range rs {
		if err := WriteAttributed(ctx, sink, r, a); err != nil {
			errs = append(errs, err)
		}
	}
	return batchError(errs, len(errs))
}

// batchError joins the errors of a batch write that lost failed records,
// as an *enforcement.BatchWriteError; nil when none failed.
func batchError(errs []error, failed int) error {
	if failed == 0 {
		return errors.Join(errs...)
	}
	return &enforcement.BatchWriteError{Failed: failed, Err: errors.Join(errs...)}
}

// WriteAttributed writes r to sink with attribution a: through
// WriteAttributed when sink has it, else in WriteRecord's context.
func WriteAttributed(ctx context.Context, sink enforcement.RecordSink, r *enforcement.Record, a Attribution) error {
	if as, ok := sink.(AttributedSink); ok {
		return as.WriteAttributed(ctx, r, a)
	}
	return sink.WriteRecord(WithAttribution(ctx, a), r)
}

// Framing is how a sink writes records: its format, and whether it writes
// policy markers (FormatRecord only). The zero Framing writes bare records.
type Framing struct {
	Format  Format
	Markers bool
}

// PolicyMarker is implemented by the sinks: MarkPolicy writes a marker
// line for version unless the sink's last marker already names it (or
// the sink writes no markers). The gateway calls it when a policy takes
// effect, so a trail names its policy before any record.
type PolicyMarker interface {
	MarkPolicy(ctx context.Context, version string) error
}

// framer frames one sink's lines and keeps its marker state. Records are
// written under mu's read lock, a marker and the record that needs it
// under its write lock, so that within one sink no record of another
// version lands between a marker and the records it covers.
type framer struct {
	f   Framing
	now func() time.Time

	mu      sync.RWMutex
	version string // of the last marker written
	marker  []byte // the last marker line written (rotation repeats it)

	// reuse is set by sinks whose out is done with the lines when it
	// returns (it writes them, and io.Writer does not retain them): their
	// line buffers go back to bufs for the next record, instead of a new
	// one per record. Records are framed concurrently, outside any lock,
	// hence a pool rather than one buffer.
	reuse bool
	bufs  sync.Pool // of *[]byte
}

// maxPooledLine is the largest line buffer kept for reuse: records are
// payload-free and well under it, so a larger one is a rare outlier not
// worth holding on to.
const maxPooledLine = 64 << 10

// emit writes the lines for r: out gets one buffer of whole lines, a
// marker first when one is due, so it can write them at once.
func (fr *framer) emit(ctx context.Context, r *enforcement.Record, out func(ctx context.Context, lines []byte, marker bool) error) error {
	return fr.emitAs(ctx, r, AttributionFrom(ctx), out)
}

// emitAs is emit with the attribution given.
func (fr *framer) emitAs(ctx context.Context, r *enforcement.Record, a Attribution, out func(ctx context.Context, lines []byte, marker bool) error) error {
	return fr.emitBatch(ctx, []*enforcement.Record{r}, a, out)
}

// emitBatch writes the lines of rs: out gets them in one buffer, after a
// marker when one is due.
func (fr *framer) emitBatch(ctx context.Context, rs []*enforcement.Record, a Attribution, out func(ctx context.Context, lines []byte, marker bool) error) error {
	if len(rs) == 0 {
		return nil
	}
	var p *[]byte
	var b []byte
	if fr.reuse {
		if p, _ = fr.bufs.Get().(*[]byte); p == nil {
			p = new([]byte)
		}
		b = (*p)[:0]
	} else {
		b = make([]byte, 0, 768*len(rs))
	}
	// A record that cannot be framed is lost alone, as when records were
	// written one by one: the others of the batch are still written.
	var errs []error
	framed := 0
	for _, r := range rs {
		next, err := fr.frame(b, r, a)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b = next
		framed++
	}
	failed := len(rs) - framed
	if framed > 0 {
		if err := fr.write(ctx, b, a, out); err != nil {
			errs, failed = append(errs, err), len(rs)
		}
	}
	err := batchError(errs, failed)
	if p != nil && cap(b) <= maxPooledLine {
		*p = b[:0]
		fr.bufs.Put(p)
	}
	return err
}

// write hands b, the records' lines, to out, after a marker when one is due.
func (fr *framer) write(ctx context.Context, b []byte, a Attribution, out func(ctx context.Context, lines []byte, marker bool) error) error {
	fr.mu.RLock()
	if !fr.marks() || a.PolicyVersion == "" || fr.version == a.PolicyVersion {
		defer fr.mu.RUnlock()
		return out(ctx, b, false)
	}
	fr.mu.RUnlock()
	return fr.mark(ctx, a.PolicyVersion, b, out)
}

// mark writes a marker for version (unless it is the last one), followed
// by rest, under the write lock.
func (fr *framer) mark(ctx context.Context, version string, rest []byte, out func(ctx context.Context, lines []byte, marker bool) error) error {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if fr.version == version {
		if rest == nil {
			return nil
		}
		return out(ctx, rest, false)
	}
	m, err := markerLine(version, fr.clock()())
	if err != nil {
		return err
	}
	if err := out(ctx, append(m[:len(m):len(m)], rest...), true); err != nil {
		return err // the next write tries the marker again
	}
	fr.version, fr.marker = version, m
	return nil
}

// markPolicy is MarkPolicy for the sinks.
func (fr *framer) markPolicy(ctx context.Context, version string, out func(ctx context.Context, lines []byte, marker bool) error) error {
	if !fr.marks() || version == "" {
		return nil
	}
	return fr.mark(ctx, version, nil, out)
}

// current returns the last marker line; call it from out, which runs
// under mu.
func (fr *framer) current() []byte { return fr.marker }

func (fr *framer) marks() bool { return fr.f.Markers && fr.f.Format != FormatEnvelope }

func (fr *framer) clock() func() time.Time {
	if fr.now != nil {
		return fr.now
	}
	return time.Now
}

// frame appends r's line in the sink's format to dst: a dst of 768 bytes
// holds a typical record (600-700 bytes) when bare.
func (fr *framer) frame(dst []byte, r *enforcement.Record, a Attribution) ([]byte, error) {
	if fr.f.Format != FormatEnvelope {
		b, err := r.AppendJSON(dst)
		if err != nil {
			return nil, fmt.Errorf("records: marshal: %w", err)
		}
		return append(b, '\n'), nil
	}
	b, err := r.AppendJSON(append(dst, `{"record":`...))
	if err != nil {
		return nil, fmt.Errorf("records: marshal: %w", err)
	}
	ab, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("records: marshal envelope: %w", err)
	}
	b = append(b, `,"`+EnvelopeKey+`":`...)
	b = append(b, ab...)
	return append(b, "}\n"...), nil
}

// markerLine returns the marker line for version written at t.
func markerLine(version string, t time.Time) ([]byte, error) {
	b, err := json.Marshal(map[string]Marker{MarkerKey: {Version: version, Timestamp: t.UTC().Format(time.RFC3339Nano)}})
	if err != nil {
		return nil, fmt.Errorf("records: marshal marker: %w", err)
	}
	return append(b, '\n'), nil
}
