package providers

import (
	"bufio"
	"context"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

func TestNewTransportTuning(t *testing.T) {
	tr := newTransport(0, 0)
	if tr.MaxIdleConnsPerHost != 256 || tr.IdleConnTimeout != 90*time.Second || !tr.ForceAttemptHTTP2 ||
		tr.ResponseHeaderTimeout != 0 || tr.TLSHandshakeTimeout != 10*time.Second || tr.DisableCompression {
		t.Errorf("default transport tuning off: %+v", tr)
	}
	tr = newTransport(2*time.Second, 5*time.Second)
	if tr.ResponseHeaderTimeout != 5*time.Second || tr.TLSHandshakeTimeout != 2*time.Second {
		t.Errorf("timeouts not applied: header %v tls %v", tr.ResponseHeaderTimeout, tr.TLSHandshakeTimeout)
	}
}

// countingConn counts the reads of a connection.
type countingConn struct {
	net.Conn
	reads *atomic.Int32
}

func (c countingConn) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.Conn.Read(p)
}

// TestStreamReadSyscalls: a 57 KiB answer that has arrived whole is read
// in a few reads of the connection, not one per 4 KiB (net/http's default
// buffer), even when its reader asks for small pieces as the SSE readers
// do. The connection is a pipe whose other end writes the answer at once,
// so the count depends on the transport's buffer alone, not on how a
// loaded machine paces loopback TCP; the same transport with the default
// buffer is the control.
func TestStreamReadSyscalls(t *testing.T) {
	body := strings.Repeat("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n", 64<<10/64)
	answer := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	reads := func(tr *http.Transport) int32 {
		var n atomic.Int32
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			client, server := net.Pipe()
			go func() {
				defer server.Close()
				if _, err := http.ReadRequest(bufio.NewReader(server)); err != nil {
					return
				}
				io.WriteString(server, answer) // one write: the whole answer is there to read
				io.Copy(io.Discard, server)
			}()
			return countingConn{Conn: client, reads: &n}, nil
		}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get("http://upstream.test/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got strings.Builder
		piece := make([]byte, 512)
		for {
			k, err := resp.Body.Read(piece)
			got.Write(piece[:k])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if got.String() != body {
			t.Fatalf("read %d bytes, want %d", got.Len(), len(body))
		}
		return n.Load()
	}
	control := newTransport(time.Second, 0)
	control.ReadBufferSize = 0 // net/http's default, 4 KiB
	ours, theirs := reads(newTransport(time.Second, 0)), reads(control)
	t.Logf("reads of a %d-byte answer: %d (net/http's default buffer: %d)", len(body), ours, theirs)
	if ours > 4 {
		t.Errorf("a %d-byte answer took %d reads of the connection, want at most 4", len(body), ours)
	}
	if theirs < 14 {
		t.Errorf("control: the default buffer took %d reads, expected at least 14: the test no longer measures the buffer", theirs)
	}
}

func TestConnectionReuse(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"ok":true}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	up := mustOpenAI(t, OpenAIConfig{BaseURL: srv.URL, APIKey: "sk"})
	for range 20 {
		resp, err := up.Send(t.Context(), wire.OpChatCompletions, []byte(testBody), nil)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("20 sequential requests opened %d connections, want 1", n)
	}
}

func TestHTTP2OverTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	tr := newTransport(time.Second, 0)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tr.TLSClientConfig.RootCAs = pool
	up := mustOpenAI(t, OpenAIConfig{BaseURL: srv.URL, Transport: tr})
	resp, err := up.Send(t.Context(), wire.OpChatCompletions, []byte(testBody), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); got != "HTTP/2.0" {
		t.Errorf("negotiated %s, want HTTP/2.0", got)
	}
}
