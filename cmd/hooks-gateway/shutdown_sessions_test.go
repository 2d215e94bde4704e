package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Stopping a gateway whose sessions live in its own memory ends every
// open managed session: each trail's last record is its agent_shutdown
// (reason cancelled), written before the process exits.
func TestStopEndsOpenMemorySessions(t *testing.T) {
	g := start(t, "--config", writeConfig(t, `listeners: {http: "127.0.0.1:0"}
upstreams: [{name: mock, type: mock}]
interceptors: [{name: pass, type: allow}]
records: {sinks: [{type: stdout}]}
`))
	body := `{"model":"mock","messages":[{"role":"user","content":"hello"}]}`
	for _, id := range []string{"run-a", "run-a", "run-b"} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+g.addr+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Agent-Hooks-Session", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("session %s: status %d", id, resp.StatusCode)
		}
	}
	if code := g.stop(t); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, g.stderr.String())
	}
	type rec struct {
		Point    string `json:"interception_point"`
		Session  string `json:"session_id"`
		Sequence int64  `json:"sequence"`
	}
	// By session name: each session's records carry one trail id, its
	// name and the incarnation the memory store minted.
	last := map[string]rec{}
	shutdowns := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(g.stdout.String()), "\n") {
		var r rec
		if json.Unmarshal([]byte(line), &r) != nil || r.Point == "" {
			continue
		}
		name, ok := memoryTrailName(r.Session)
		if !ok {
			t.Fatalf("record in session %q: no incarnation", r.Session)
		}
		if prev, seen := last[name]; seen && prev.Session != r.Session {
			t.Fatalf("session %s under two trail ids: %s and %s", name, prev.Session, r.Session)
		}
		if r.Sequence < last[name].Sequence {
			t.Fatalf("session %s: record %d after %d", name, r.Sequence, last[name].Sequence)
		}
		last[name] = r
		if r.Point == "agent_shutdown" {
			shutdowns[name]++
		}
	}
	for _, id := range []string{"run-a", "run-b"} {
		if last[id].Point != "agent_shutdown" || shutdowns[id] != 1 {
			t.Errorf("session %s: last record %q, %d agent_shutdown records; want one agent_shutdown, last", id, last[id].Point, shutdowns[id])
		}
	}
}
