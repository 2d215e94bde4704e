package records

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// receiver is an httptest server recording every request's records.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	batches  [][]*enforcement.Record
	headers  []http.Header
	attempts atomic.Int64
	// status, when set, answers each attempt (1-based); 0 means 200.
	status func(attempt int64) int
}

func newReceiver(t *testing.T, status func(attempt int64) int) *receiver {
	t.Helper()
	rc := &receiver{status: status}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := rc.attempts.Add(1)
		if rc.status != nil {
			if code := rc.status(n); code != 0 && code != http.StatusOK {
				w.WriteHeader(code)
				return
			}
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		var batch []*enforcement.Record
		sc := bufio.NewScanner(bytes.NewReader(body))
		for sc.Scan() {
			var rec enforcement.Record
			if err := rec.UnmarshalJSON(sc.Bytes()); err != nil {
				t.Errorf("line %q is not a record: %v", sc.Text(), err)
			}
			batch = append(batch, &rec)
		}
		if !bytes.HasSuffix(body, []byte("\n")) {
			t.Errorf("body does not end with a newline: %q", body)
		}
		rc.mu.Lock()
		rc.batches = append(rc.batches, batch)
		rc.headers = append(rc.headers, r.Header.Clone())
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

// sizes returns the size of every batch received so far.
func (rc *receiver) sizes() []int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]int, len(rc.batches))
	for i, b := range rc.batches {
		out[i] = len(b)
	}
	return out
}

func (rc *receiver) sequences() []int64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []int64
	for _, b := range rc.batches {
		for _, r := range b {
			out = append(out, r.Sequence)
		}
	}
	return out
}

func newHTTP(t *testing.T, opts HTTPOptions) *HTTP {
	t.Helper()
	h, err := NewHTTP(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func writeN(t *testing.T, h *HTTP, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if err := h.WriteRecord(context.Background(), sessionRecord("s1", int64(i), enforcement.Input)); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestHTTPBatchesByCountAndFlushesTheRestOnClose(t *testing.T) {
	rc := newReceiver(t, nil)
	h := newHTTP(t, HTTPOptions{URL: rc.URL + "/ingest?src=gw", Token: "tok-123", MaxBatch: 10, FlushInterval: time.Hour})
	writeN(t, h, 0, 25)
	eventually(t, "two full batches", func() bool { return len(rc.sizes()) == 2 })
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rc.sizes(); len(got) != 3 || got[0] != 10 || got[1] != 10 || got[2] != 5 {
		t.Fatalf("batch sizes %v, want [10 10 5]", got)
	}
	for i, s := range rc.sequences() {
		if s != int64(i) {
			t.Fatalf("records arrived as %v, want 0..24 in order", rc.sequences())
		}
	}
	hd := rc.headers[0]
	if hd.Get("Content-Type") != "application/x-ndjson" || hd.Get("Authorization") != "Bearer tok-123" {
		t.Errorf("headers = %v", hd)
	}
	if h.Delivered() != 25 || h.Dropped() != 0 {
		t.Errorf("delivered %d, dropped %d; want 25, 0", h.Delivered(), h.Dropped())
	}
}

func TestHTTPFlushesAPartialBatchAfterTheInterval(t *testing.T) {
	rc := newReceiver(t, nil)
	h := newHTTP(t, HTTPOptions{URL: rc.URL, FlushInterval: 50 * time.Millisecond})
	start := time.Now()
	writeN(t, h, 0, 3)
	eventually(t, "the timed flush", func() bool { return len(rc.sizes()) == 1 })
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("flushed after %v, before the 50ms interval", d)
	}
	if got := rc.sizes(); got[0] != 3 {
		t.Fatalf("batch sizes %v, want [3]", got)
	}
	if _, ok := rc.headers[0]["Authorization"]; ok {
		t.Errorf("an Authorization header was sent without a token")
	}
}

func TestHTTPRetries503ThenSucceeds(t *testing.T) {
	rc := newReceiver(t, func(n int64) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	h := newHTTP(t, HTTPOptions{URL: rc.URL, MaxAttempts: 3, Backoff: time.Millisecond})
	writeN(t, h, 0, 4)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if rc.attempts.Load() != 3 {
		t.Errorf("%d attempts, want 3 (two 503s, then success)", rc.attempts.Load())
	}
	if got := rc.sizes(); len(got) != 1 || got[0] != 4 {
		t.Errorf("batches received %v, want one of 4", got)
	}
	if h.Delivered() != 4 || h.Dropped() != 0 {
		t.Errorf("delivered %d, dropped %d; want 4, 0", h.Delivered(), h.Dropped())
	}
}

func TestHTTPDropsABatchAfterTheLastAttempt(t *testing.T) {
	rc := newReceiver(t, func(int64) int { return http.StatusBadGateway })
	var onDrop atomic.Int64
	h := newHTTP(t, HTTPOptions{URL: rc.URL, MaxBatch: 5, FlushInterval: time.Hour, MaxAttempts: 2, Backoff: time.Millisecond,
		OnDrop: func(n int) { onDrop.Add(int64(n)) }})
	writeN(t, h, 0, 5)
	eventually(t, "the batch to be dropped", func() bool { return h.Dropped() == 5 })
	if rc.attempts.Load() != 2 {
		t.Errorf("%d attempts, want 2", rc.attempts.Load())
	}
	if onDrop.Load() != 5 {
		t.Errorf("OnDrop saw %d records, want 5", onDrop.Load())
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close with nothing queued: %v", err)
	}
}

func TestHTTPDoesNotRetryAClientError(t *testing.T) {
	rc := newReceiver(t, func(int64) int { return http.StatusBadRequest })
	h := newHTTP(t, HTTPOptions{URL: rc.URL, MaxAttempts: 3, Backoff: time.Millisecond})
	writeN(t, h, 0, 2)
	err := h.Close()
	if err == nil || !strings.Contains(err.Error(), "2 records undelivered") {
		t.Fatalf("Close = %v, want 2 records undelivered", err)
	}
	if rc.attempts.Load() != 1 {
		t.Errorf("%d attempts for a 400, want 1", rc.attempts.Load())
	}
}

func TestHTTPRetriesConnectionErrors(t *testing.T) {
	rc := newReceiver(t, nil)
	url := rc.URL
	rc.Close() // nothing listens there any more
	h := newHTTP(t, HTTPOptions{URL: url, MaxAttempts: 3, Backoff: time.Millisecond})
	writeN(t, h, 0, 1)
	if err := h.Close(); err == nil {
		t.Fatal("Close reported success with the receiver gone")
	}
	if h.Dropped() != 1 {
		t.Errorf("dropped %d, want 1", h.Dropped())
	}
}

func TestHTTPQueueOverflowNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	var inflight atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inflight.Add(1)
		select { // a receiver that hangs
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	var onDrop atomic.Int64
	h := newHTTP(t, HTTPOptions{URL: srv.URL, MaxBatch: 1, Queue: 5, Timeout: time.Minute, CloseTimeout: 100 * time.Millisecond,
		OnDrop: func(n int) { onDrop.Add(int64(n)) }})
	writeN(t, h, 0, 1)
	eventually(t, "the first batch to hang", func() bool { return inflight.Load() == 1 })

	const n = 1000
	full := 0
	start := time.Now()
	for i := range n {
		err := h.WriteRecord(context.Background(), sessionRecord("s1", int64(i+1), enforcement.Input))
		switch {
		case errors.Is(err, ErrQueueFull):
			full++
		case err != nil:
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("%d writes took %v with the receiver hanging", n, d)
	}
	if full != n-5 || h.Dropped() != int64(n-5) || onDrop.Load() != int64(n-5) {
		t.Errorf("ErrQueueFull %d, Dropped %d, OnDrop %d; want %d each (queue of 5)", full, h.Dropped(), onDrop.Load(), n-5)
	}
	if h.Queued() != 5 {
		t.Errorf("queued %d, want 5", h.Queued())
	}

	start = time.Now()
	err := h.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with a 100ms close timeout", d)
	}
	if err == nil || !strings.Contains(err.Error(), "6 records undelivered") {
		t.Errorf("Close = %v, want 6 records undelivered (the hanging batch and the queue)", err)
	}
	if err := h.WriteRecord(context.Background(), sessionRecord("s1", 0, enforcement.Input)); !errors.Is(err, ErrClosed) {
		t.Errorf("write after Close = %v, want ErrClosed", err)
	}
}

func TestHTTPCloseDrainsTheQueue(t *testing.T) {
	rc := newReceiver(t, nil)
	h := newHTTP(t, HTTPOptions{URL: rc.URL, MaxBatch: 7, FlushInterval: time.Hour, Queue: 100})
	writeN(t, h, 0, 50)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(rc.sequences()); got != 50 {
		t.Fatalf("%d records delivered by Close, want 50", got)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestHTTPRejectsABadURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/y", "/relative", "http://"} {
		if _, err := NewHTTP(HTTPOptions{URL: u}); err == nil {
			t.Errorf("NewHTTP(%q) succeeded", u)
		}
	}
}
