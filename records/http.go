package records

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// HTTP sink defaults, used for zero HTTPOptions fields.
const (
	DefaultHTTPMaxBatch      = 100
	DefaultHTTPFlushInterval = time.Second
	DefaultHTTPQueue         = 10_000
	DefaultHTTPMaxAttempts   = 3
	DefaultHTTPTimeout       = 5 * time.Second
	DefaultHTTPBackoff       = 250 * time.Millisecond
	DefaultHTTPCloseTimeout  = 5 * time.Second
)

// maxHTTPBackoff caps the pause between two attempts.
const maxHTTPBackoff = 5 * time.Second

// NDJSONContentType is the Content-Type of the HTTP sink's requests.
const NDJSONContentType = "application/x-ndjson"

// ErrQueueFull is returned by HTTP.WriteRecord when the queue is full: the
// record was dropped (and counted).
var ErrQueueFull = errors.New("records: http sink queue full, record dropped")

// HTTPOptions configures an HTTP sink. Zero fields take the defaults.
type HTTPOptions struct {
	// URL receives the POSTs; an absolute http:// or https:// URL.
	URL string
	// Token, when set, is sent as "Authorization: Bearer <Token>".
	Token string
	// MaxBatch is the most records per request (default 100).
	MaxBatch int
	// FlushInterval is the longest a record waits for its batch to fill
	// (default 1 s).
	FlushInterval time.Duration
	// Queue bounds the records waiting for delivery (default 10,000);
	// beyond it WriteRecord drops the record.
	Queue int
	// MaxAttempts bounds the attempts per batch (default 3). Connection
	// errors, 429 and 5xx are retried with exponential backoff and
	// jitter; any other status drops the batch at once.
	MaxAttempts int
	// Timeout bounds each attempt (default 5 s).
	Timeout time.Duration
	// Backoff is the pause before the first retry, doubled for each
	// further one (default 250 ms, at most 5 s).
	Backoff time.Duration
	// CloseTimeout bounds how long Close delivers what is queued (default
	// 5 s); what is left then is dropped.
	CloseTimeout time.Duration
	// Client sends the requests. The default does not follow redirects:
	// a 3xx drops the batch rather than turn the POST into a GET.
	Client *http.Client
	// OnDrop, when set, is called with the number of records each time
	// records are dropped (queue full, batch undeliverable, sink closed).
	// It runs on the request path: it must be fast and must not block.
	OnDrop func(n int)
	// Logger receives one warning when delivery starts failing and one
	// notice when it recovers (default: discard).
	Logger *slog.Logger
	// Framing is the line format and policy markers. A marker is queued
	// with the record that needs it, as one entry: it is delivered, or
	// dropped, with that record.
	Framing Framing
}

// HTTP is a sink that POSTs records in batches, as application/x-ndjson
// (one JSON record per line), from a bounded in-memory queue. WriteRecord
// only enqueues: it never waits on the receiver, and when the queue is
// full the record is dropped, counted (Dropped, OnDrop) and reported as
// ErrQueueFull. A single background sender posts a batch when MaxBatch
// records are waiting or FlushInterval after the first of them; a batch
// that still fails after MaxAttempts is dropped and counted too. Close
// stops accepting records and delivers the queue within CloseTimeout.
//
// Delivery is at least once: a retried batch the receiver had in fact
// accepted arrives twice (records carry session_id and sequence to
// deduplicate).
type HTTP struct {
	fr           framer
	url          string
	host         string
	token        string
	maxBatch     int
	flushEvery   time.Duration
	attempts     int
	timeout      time.Duration
	backoff      time.Duration
	closeTimeout time.Duration
	client       *http.Client
	transport    *http.Transport // owned, when the default client is used
	onDrop       func(int)
	logger       *slog.Logger

	// mu orders WriteRecord against Close: sends happen under RLock, so
	// Close can close queue once it holds the write lock.
	mu     sync.RWMutex
	closed bool
	queue  chan entry

	ctx    context.Context // canceled when Close's deadline passes
	cancel context.CancelFunc
	done   chan struct{} // closed when the sender exits

	dropped   atomic.Int64
	delivered atomic.Int64

	failing bool // sender goroutine only: delivery currently failing
}

// NewHTTP validates opts and starts the sink's sender.
func NewHTTP(opts HTTPOptions) (*HTTP, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is not quoted: its query may hold a credential.
		return nil, errors.New("records: http sink: url must be an absolute http:// or https:// URL")
	}
	h := &HTTP{
		fr:           framer{f: opts.Framing},
		url:          opts.URL,
		host:         u.Host,
		token:        opts.Token,
		maxBatch:     orDefault(opts.MaxBatch, DefaultHTTPMaxBatch),
		flushEvery:   orDefault(opts.FlushInterval, DefaultHTTPFlushInterval),
		attempts:     orDefault(opts.MaxAttempts, DefaultHTTPMaxAttempts),
		timeout:      orDefault(opts.Timeout, DefaultHTTPTimeout),
		backoff:      orDefault(opts.Backoff, DefaultHTTPBackoff),
		closeTimeout: orDefault(opts.CloseTimeout, DefaultHTTPCloseTimeout),
		client:       opts.Client,
		onDrop:       opts.OnDrop,
		logger:       opts.Logger,
		queue:        make(chan entry, orDefault(opts.Queue, DefaultHTTPQueue)),
		done:         make(chan struct{}),
	}
	if h.client == nil {
		h.transport = http.DefaultTransport.(*http.Transport).Clone()
		h.client = &http.Client{
			Transport:     h.transport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	go h.run()
	return h, nil
}

// orDefault returns v, or def when v is not positive.
func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// WriteRecord enqueues r without blocking. It returns ErrQueueFull when
// the queue is full and ErrClosed after Close; either way the record is
// counted as dropped.
func (h *HTTP) WriteRecord(ctx context.Context, r *enforcement.Record) error {
	return h.fr.emit(ctx, r, h.enqueue)
}

// WriteAttributed is WriteRecord with the attribution given (records.AttributedSink).
func (h *HTTP) WriteAttributed(ctx context.Context, r *enforcement.Record, a Attribution) error {
	return h.fr.emitAs(ctx, r, a, h.enqueue)
}

// MarkPolicy queues a policy marker for version when one is due; a
// marker the queue cannot take is queued again with the next record.
func (h *HTTP) MarkPolicy(ctx context.Context, version string) error {
	return h.fr.markPolicy(ctx, version, h.enqueue)
}

// entry is one queued write: whole lines, and how many of them are
// records (a policy marker is not counted as delivered or dropped).
type entry struct {
	lines   []byte
	records int
}

// enqueue queues b, whole lines, as one entry.
func (h *HTTP) enqueue(_ context.Context, b []byte, marker bool) error {
	e := entry{lines: b, records: 1}
	if marker && bytes.Count(b, []byte("\n")) == 1 {
		e.records = 0 // a marker alone (MarkPolicy)
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		h.drop(e.records)
		return ErrClosed
	}
	select {
	case h.queue <- e:
		return nil
	default:
		h.drop(e.records)
		return ErrQueueFull
	}
}

// Dropped counts the records that were accepted or offered but never
// delivered: queue full, batch undeliverable, sink closed.
func (h *HTTP) Dropped() int64 { return h.dropped.Load() }

// Delivered counts the records the receiver acknowledged with a 2xx.
func (h *HTTP) Delivered() int64 { return h.delivered.Load() }

// Queued returns how many records wait for delivery, the batch being
// sent excluded.
func (h *HTTP) Queued() int { return len(h.queue) }

func (h *HTTP) drop(n int) {
	if n == 0 {
		return
	}
	h.dropped.Add(int64(n))
	if h.onDrop != nil {
		h.onDrop(n)
	}
}

// Close stops accepting records and delivers those queued, waiting at most
// CloseTimeout; it reports how many were dropped meanwhile. Calling it
// again waits for the first call's drain and returns nil.
func (h *HTTP) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		<-h.done
		return nil
	}
	h.closed = true
	before := h.dropped.Load()
	close(h.queue)
	h.mu.Unlock()

	deadline := time.AfterFunc(h.closeTimeout, h.cancel)
	<-h.done
	deadline.Stop()
	h.cancel()
	if h.transport != nil {
		h.transport.CloseIdleConnections()
	}
	if n := h.dropped.Load() - before; n > 0 {
		return fmt.Errorf("records: http sink %s: %d records undelivered at close", h.host, n)
	}
	return nil
}

// run is the sender: it batches the queue and delivers each batch, until
// the queue is closed and drained.
func (h *HTTP) run() {
	defer close(h.done)
	batch := make([]entry, 0, h.maxBatch)
	flush := time.NewTimer(h.flushEvery)
	flush.Stop()
	defer flush.Stop()
	send := func() {
		flush.Stop()
		h.deliver(batch)
		clear(batch)
		batch = batch[:0]
	}
	for {
		select {
		case b, ok := <-h.queue:
			if !ok {
				send()
				return
			}
			if len(batch) == 0 {
				flush.Reset(h.flushEvery)
			}
			batch = append(batch, b)
			if len(batch) >= h.maxBatch {
				send()
			}
		case <-flush.C:
			send()
		}
	}
}

// deliver posts one batch, with retries, and accounts for its fate.
func (h *HTTP) deliver(batch []entry) {
	if len(batch) == 0 {
		return
	}
	var body []byte
	records := 0
	for _, e := range batch {
		body = append(body, e.lines...) // every line ends with '\n'
		records += e.records
	}
	if err := h.send(body); err != nil {
		h.drop(records)
		if !h.failing {
			h.failing = true
			h.logger.Warn("records: http sink delivery failing; undeliverable batches are dropped",
				"host", h.host, "records", records, "error", err.Error())
		}
		return
	}
	h.delivered.Add(int64(records))
	if h.failing {
		h.failing = false
		h.logger.Info("records: http sink delivery recovered", "host", h.host, "dropped_total", h.Dropped())
	}
}

// send makes up to h.attempts attempts, pausing with exponential backoff
// and jitter between them.
func (h *HTTP) send(body []byte) error {
	pause := h.backoff
	for attempt := 1; ; attempt++ {
		err := h.post(body)
		var ae *attemptError
		if err == nil || !errors.As(err, &ae) || !ae.retryable() || attempt >= h.attempts || h.ctx.Err() != nil {
			return err
		}
		// Full pause ± 50 %, so replicas do not retry in step.
		jittered := pause/2 + rand.N(pause+1)
		t := time.NewTimer(jittered)
		select {
		case <-h.ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, maxHTTPBackoff)
	}
}

// attemptError is one failed attempt: a transport error or a non-2xx
// status.
type attemptError struct {
	status int // 0 for a transport error
	err    error
}

func (e *attemptError) Error() string {
	if e.status == 0 {
		return "post: " + e.err.Error()
	}
	return "post: status " + strconv.Itoa(e.status) + " " + http.StatusText(e.status)
}

func (e *attemptError) Unwrap() error { return e.err }

// retryable reports whether another attempt may succeed: connection
// errors, 429 and 5xx.
func (e *attemptError) retryable() bool {
	return e.status == 0 || e.status == http.StatusTooManyRequests || e.status >= 500
}

// post makes one attempt.
func (h *HTTP) post(body []byte) error {
	ctx, cancel := context.WithTimeout(h.ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("records: http sink: %w", err)
	}
	req.Header.Set("Content-Type", NDJSONContentType)
	req.Header.Set("User-Agent", "hooks-gateway")
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		// A *url.Error quotes the URL, whose query may hold a credential.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return &attemptError{err: err}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return &attemptError{status: resp.StatusCode}
	}
	return nil
}
