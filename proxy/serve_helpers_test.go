package proxy_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// serveDoc parses doc as the configuration file name, and serves the
// gateway Build makes of it until the test ends (serveConfig).
func serveDoc(t *testing.T, name, doc string, records, logs io.Writer) string {
	t.Helper()
	cfg, err := config.Parse(name, []byte(doc))
	if err != nil {
		t.Fatalf("config:\n%v", err)
	}
	return serveConfig(t, cfg, records, logs)
}

// serveConfig serves the gateway Build makes of cfg on a loopback listener
// until the test ends and returns its root URL. records receives its
// stdout record sinks, logs its log lines; nil discards them.
func serveConfig(t *testing.T, cfg *config.Config, records, logs io.Writer) string {
	t.Helper()
	if records == nil {
		records = io.Discard
	}
	if logs == nil {
		logs = io.Discard
	}
	asm, err := proxy.Build(context.Background(), cfg, records, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Cleanup(func() { asm.Close() })
	hs := httptest.NewServer(asm.Server)
	t.Cleanup(hs.Close)
	return hs.URL
}
