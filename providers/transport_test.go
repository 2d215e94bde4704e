package providers

import (
	"context"
	"crypto/x509"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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

// TestStreamReadSyscalls: a 64 KiB answer written at once is read in a
// few reads of the connection, not one per 4 KiB (net/http's default
// buffer, which took at least 16).
func TestStreamReadSyscalls(t *testing.T) {
	body := strings.Repeat("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n", 64<<10/64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	defer srv.Close()
	var reads atomic.Int32
	tr := newTransport(time.Second, 0)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, reads: &reads}, nil
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(got) != body {
		t.Fatalf("read %d bytes, err %v", len(got), err)
	}
	if n := reads.Load(); n >= 16 {
		t.Errorf("a %d-byte answer took %d reads of the connection", len(body), n)
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
