package records

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Redis stream defaults.
const (
	DefaultStream       = "hooks-gateway:records"
	DefaultStreamLen    = 1_000_000
	DefaultRedisTimeout = time.Second
	// StreamField is the stream entry field holding the record's line
	// (its JSON, or its envelope's under FormatEnvelope).
	StreamField = "record"
	// StreamMarkerField is the field of the entries holding a policy
	// marker line instead of a record.
	StreamMarkerField = "policy"
)

// RedisStreamOptions configures a RedisStream sink.
type RedisStreamOptions struct {
	// URL is a redis:// or rediss:// URL; ignored when Client is set.
	URL string
	// Client, when set, is used instead of dialing URL; the sink does not
	// close it.
	Client *redis.Client
	// Stream is the stream key (default DefaultStream).
	Stream string
	// MaxLen caps the stream with MAXLEN ~ MaxLen (default
	// DefaultStreamLen): Redis trims the oldest entries, approximately.
	MaxLen int64
	// Timeout bounds each XADD, connecting included (default 1 s).
	Timeout time.Duration
	// Framing is the line format and policy markers. A marker is an
	// entry of its own, under StreamMarkerField, added in one MULTI with
	// the record that needs it.
	Framing Framing
}

// RedisStream is a sink adding each record to a Redis stream:
//
//	XADD <stream> MAXLEN ~ <max_len> * record <json>
//
// Read it back with XRANGE/XREAD (or a consumer group); entry ids order the
// records across gateway replicas. A write fails, never blocks, beyond the
// timeout, and is not retried: XADD is not idempotent, and a retry after a
// lost reply would duplicate the record.
type RedisStream struct {
	fr      framer
	client  *redis.Client
	owned   bool
	stream  string
	maxLen  int64
	timeout time.Duration
	closed  atomic.Bool
}

// NewRedisStream returns a Redis stream sink. It performs no I/O, so the
// gateway starts while Redis is down (writes fail and are counted until it
// is back); it fails only for an unparseable URL.
func NewRedisStream(opts RedisStreamOptions) (*RedisStream, error) {
	s := &RedisStream{
		fr:      framer{f: opts.Framing},
		client:  opts.Client,
		stream:  opts.Stream,
		maxLen:  opts.MaxLen,
		timeout: opts.Timeout,
	}
	if s.stream == "" {
		s.stream = DefaultStream
	}
	if s.maxLen <= 0 {
		s.maxLen = DefaultStreamLen
	}
	if s.timeout <= 0 {
		s.timeout = DefaultRedisTimeout
	}
	if s.client == nil {
		co, err := redis.ParseURL(opts.URL)
		if err != nil {
			// url.Parse errors quote the whole URL, password included.
			if ue := (*url.Error)(nil); errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, fmt.Errorf("records: redis url: %w", err)
		}
		co.DialTimeout = s.timeout
		co.ReadTimeout = s.timeout
		co.WriteTimeout = s.timeout
		// One dial per command and no command retries: XADD must not be
		// replayed, and the request path must not wait on reconnects.
		co.DialerRetries = 1
		co.MaxRetries = -1
		co.ContextTimeoutEnabled = true
		s.client = redis.NewClient(co)
		s.owned = true
	}
	return s, nil
}

// Stream returns the stream key.
func (s *RedisStream) Stream() string { return s.stream }

// WriteRecord adds r to the stream (after a policy marker entry when one
// is due).
func (s *RedisStream) WriteRecord(ctx context.Context, r *enforcement.Record) error {
	return s.fr.emit(ctx, r, s.add)
}

// WriteAttributed is WriteRecord with the attribution given (records.AttributedSink).
func (s *RedisStream) WriteAttributed(ctx context.Context, r *enforcement.Record, a Attribution) error {
	return s.fr.emitAs(ctx, r, a, s.add)
}

// WriteAttributedBatch adds rs in one MULTI/EXEC: one round trip
// (records.AttributedBatchSink).
func (s *RedisStream) WriteAttributedBatch(ctx context.Context, rs []*enforcement.Record, a Attribution) error {
	return s.fr.emitBatch(ctx, rs, a, s.add)
}

// MarkPolicy adds a policy marker entry for version when one is due.
func (s *RedisStream) MarkPolicy(ctx context.Context, version string) error {
	return s.fr.markPolicy(ctx, version, s.add)
}

// add adds one entry per line of b: the first under StreamMarkerField
// when marker is set, the others under StreamField; several in one
// MULTI/EXEC, so a marker never lands without its record.
func (s *RedisStream) add(ctx context.Context, b []byte, marker bool) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	xadd := func(p redis.Cmdable, i int) error {
		field := StreamField
		if i == 0 && marker {
			field = StreamMarkerField
		}
		return p.XAdd(ctx, &redis.XAddArgs{
			Stream: s.stream,
			MaxLen: s.maxLen,
			Approx: true,
			Values: []any{field, lines[i]},
		}).Err()
	}
	var err error
	if len(lines) == 1 {
		err = xadd(s.client, 0)
	} else {
		_, err = s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for i := range lines {
				_ = xadd(p, i) // queued: the pipeline reports the errors
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("records: xadd %s: %w", s.stream, err)
	}
	return nil
}

// Close releases the client when the sink dialed it. Later writes fail.
func (s *RedisStream) Close() error {
	if !s.owned || s.closed.Swap(true) {
		return nil
	}
	if err := s.client.Close(); err != nil {
		return fmt.Errorf("records: redis: %w", err)
	}
	return nil
}
