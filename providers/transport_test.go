package providers

import (
	"crypto/x509"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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
