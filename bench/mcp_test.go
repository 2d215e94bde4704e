package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// The MCP scenario's request must be what the SDK's server and the
// gateway accept from a 2026-07-28 client, or the bench would measure
// error paths; the deny check must pass against the scenario's policy.
func TestMCPScenarioTraffic(t *testing.T) {
	up := httptest.NewServer(upstreamMux(upstreamOptions{contentBytes: 1024, chunks: 200}))
	defer up.Close()

	dir := t.TempDir()
	path, err := writeConfig(dir, "mcp.yaml", map[string]string{"UPSTREAM": up.URL, "RECORDS": dir + "/r.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("configs/mcp.yaml: %v", err)
	}
	ctx := context.Background()
	asm, err := proxy.Build(ctx, cfg, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer asm.Close()
	gw := httptest.NewServer(asm.Server)
	defer gw.Close()

	named, err := selectScenarios("mcp", false, false)
	if err != nil {
		t.Fatal(err)
	}
	sc := named[0]
	st := &stack{upstream: &child{addr: strings.TrimPrefix(up.URL, "http://")}, bare: &child{addr: "127.0.0.1:1"}, gateway: &child{addr: strings.TrimPrefix(gw.URL, "http://")}}
	for _, tg := range st.targets(sc) {
		if tg.name == "bare proxy" {
			continue
		}
		if err := probe(ctx, tg, checkMCPResult); err != nil {
			t.Errorf("%s: %v", tg.name, err)
		}
	}
	if err := mcpDenyCheck(ctx, gw.URL+mcpGatewayPath); err != nil {
		t.Error(err)
	}
	if err := mcpDenyCheck(ctx, up.URL+mcpPath); err == nil {
		t.Error("the deny check passed against the server itself, which allows the tool")
	}

	// The server checks the transport headers against the body: a request
	// without them is refused, so the load's headers are the ones it needs.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, up.URL+mcpPath, strings.NewReader(string(mcpRequest())))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcpVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Error("the SDK server accepted a 2026-07-28 tools/call without Mcp-Method and Mcp-Name")
	}
}
