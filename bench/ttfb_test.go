package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// chunkReader returns its chunks one Read at a time and counts the reads.
type chunkReader struct {
	chunks []string
	reads  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	c.reads++
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; c.chunks[0] == "" {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

func (c *chunkReader) Close() error { return nil }

// The first data byte is the read that completes a "data:" at a line's
// start: comments, event lines, headers committed early and "data:" in
// the middle of a line do not count.
func TestFirstDataReader(t *testing.T) {
	for _, tc := range []struct {
		name     string
		chunks   []string
		wantRead int // 0: never
	}{
		{"data at once", []string{"data: {}\n\n"}, 1},
		{"keep-alive comments first", []string{": keep-alive\n\n", ": keep-alive\n\n", "data: {}\n\n"}, 3},
		{"event line then data", []string{"event: message_start\n", "data: {}\n\n"}, 2},
		{"event and data in one read", []string{": x\n\nevent: a\ndata: {}\n\n"}, 1},
		{"field name split across reads", []string{": keep-alive\n\nda", "ta", ": {}\n\n"}, 3},
		{"CRLF lines", []string{": c\r\n\r\n", "data:{}\r\n\r\n"}, 2},
		{"CR lines", []string{"event: a\r", "data: {}\r\r"}, 2},
		{"data: inside a line", []string{": no data: here\n", "metadata: x\n\n"}, 0},
		{"a JSON error body", []string{`{"error":{"message":"data: none"}}`}, 0},
		{"data after a non-data line", []string{"event: x\n", "id: 1\n", "data: 1\n\n", "data: 2\n\n"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &chunkReader{chunks: append([]string(nil), tc.chunks...)}
			calls, atRead := 0, 0
			r := newFirstDataReader(src, func(time.Time) { calls++; atRead = src.reads })
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != strings.Join(tc.chunks, "") {
				t.Fatalf("the reader changed the body: %q", b)
			}
			switch {
			case tc.wantRead == 0 && calls != 0:
				t.Fatalf("first data recorded at read %d, want never", atRead)
			case tc.wantRead != 0 && (calls != 1 || atRead != tc.wantRead):
				t.Fatalf("first data recorded %d times, at read %d; want once, at read %d", calls, atRead, tc.wantRead)
			}
		})
	}
}

// The transport records a stream's first data time under vegeta's
// sequence number, after the data left the server, not at the headers.
func TestTTFBTransportKeysBySequence(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": keep-alive\n\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "data: {}\n\n")
	}))
	defer srv.Close()
	rec := newTTFBRecorder()
	c := &http.Client{Transport: &ttfbTransport{base: http.DefaultTransport, rec: rec}}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set(vegetaSeqHeader, "42")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil { // the keep-alive comment
		t.Fatal(err)
	}
	if m := rec.take(42); !m.first.IsZero() {
		t.Fatal("a first data time was recorded for a keep-alive comment")
	}
	released := time.Now()
	close(release)
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	at := rec.take(42).first
	if at.IsZero() {
		t.Fatal("no first data time recorded under the request's sequence number")
	}
	if at.Before(released) {
		t.Fatal("first data time precedes the data's release")
	}
	if m := rec.take(42); !m.first.IsZero() {
		t.Fatal("take did not forget the time")
	}
}

// A streaming attack on the paced mock yields one time to first byte per
// successful request, none later than the request's total, and counts a
// stream without data as an error.
func TestAttackRecordsTTFB(t *testing.T) {
	o := upstreamOptions{contentBytes: 64, chunks: 5, interval: time.Millisecond}
	up := httptest.NewServer(upstreamMux(o))
	defer up.Close()
	targets := []vegeta.Target{{Method: http.MethodPost, URL: up.URL + chatPath, Body: chatRequest(512, true, false),
		Header: http.Header{"Content-Type": []string{"application/json"}}}}
	res := attack(loadClient(), targets, 50, 200*time.Millisecond, true)
	if res.requests == 0 || res.errors != 0 {
		t.Fatalf("%d requests, %d errors (%s)", res.requests, res.errors, res.errorSummary())
	}
	if len(res.ttfb) != len(res.latencies) {
		t.Fatalf("%d TTFB samples for %d successes", len(res.ttfb), len(res.latencies))
	}
	for i := range res.ttfb {
		if res.ttfb[i] <= 0 || res.ttfb[i] > res.latencies[i] {
			t.Fatalf("request %d: TTFB %v, total %v", i, res.ttfb[i], res.latencies[i])
		}
	}

	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": keep-alive\n\n")
	}))
	defer silent.Close()
	targets[0].URL = silent.URL
	res = attack(loadClient(), targets, 50, 100*time.Millisecond, true)
	if res.requests == 0 || res.errorKinds[errNoData] != res.requests || len(res.ttfb) != 0 {
		t.Fatalf("a stream without data: %d requests, errors %v, %d TTFB samples", res.requests, res.errorKinds, len(res.ttfb))
	}

	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {}\n\ndata: {\"error\":{}}\n\n")
	}))
	defer cut.Close()
	targets[0].URL = cut.URL
	res = attack(loadClient(), targets, 50, 100*time.Millisecond, true)
	if res.requests == 0 || res.errorKinds[errNoTerminal] != res.requests || len(res.ttfb) != 0 {
		t.Fatalf("a stream without its terminal event: %d requests, errors %v, %d TTFB samples", res.requests, res.errorKinds, len(res.ttfb))
	}

	targets[0].URL = silent.URL
	res = attack(loadClient(), targets, 50, 100*time.Millisecond, false)
	if res.errors != 0 || res.ttfb != nil {
		t.Fatalf("without stream set: %d errors, %d TTFB samples", res.errors, len(res.ttfb))
	}
}

func TestRecorderTake(t *testing.T) {
	rec := newTTFBRecorder()
	if m := rec.take(1); !m.first.IsZero() || m.cut {
		t.Fatal("an unknown sequence number has a mark")
	}
	at := time.Now()
	rec.set(2, at)
	rec.end(2, false)
	rec.end(3, true)
	if m := rec.take(2); !m.first.Equal(at) || !m.cut {
		t.Fatalf("seq 2: %+v, want its time and cut", m)
	}
	if m := rec.take(2); !m.first.IsZero() || m.cut {
		t.Fatal("take did not forget seq 2")
	}
	if m := rec.take(3); m.cut {
		t.Fatal("a complete stream is marked cut")
	}
	if len(rec.marks) != 0 {
		t.Fatalf("%d marks left after every take", len(rec.marks))
	}
}

// A stream is complete only when its end holds a surface's terminal
// event; a denied or cut one is not, however much data it carried.
func TestFirstDataReaderSeesTheTerminalEvent(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{"data: {\"a\":1}\n\ndata: [DONE]\n\n", true},
		{"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", true},
		{"event: response.completed\ndata: {}\n\n", true},
		{"data: {\"a\":1}\n\ndata: {\"error\":{}}\n\n", false},
		{strings.Repeat("data: x\n\n", 20000), false},
	} {
		var got *bool
		fr := newFirstDataReader(io.NopCloser(strings.NewReader(tc.body)), func(time.Time) {})
		fr.onEnd = func(complete bool) { got = &complete }
		if _, err := io.Copy(io.Discard, fr); err != nil {
			t.Fatal(err)
		}
		if got == nil || *got != tc.want {
			t.Errorf("%.40q: complete = %v, want %v", tc.body, got, tc.want)
		}
	}
}
