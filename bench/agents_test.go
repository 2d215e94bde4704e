package main

import (
	"strings"
	"testing"
)

// TestAgentScenarios: run from the module root (as go run ./bench is),
// the agent scenarios find their captures, build requests of the
// announced size and fill their configurations; elsewhere they are
// skipped with the reason, not failed.
func TestAgentScenarios(t *testing.T) {
	t.Chdir("..")
	dir := t.TempDir()
	for _, sc := range agentScenarios() {
		if sc.skip != "" {
			t.Fatalf("%s: skipped: %s", sc.name, sc.skip)
		}
		if sc.run == nil && (len(sc.request) < 84<<10-100 || len(sc.request) > 84<<10+100) {
			t.Fatalf("%s: %d bytes, want about 84 KiB", sc.name, len(sc.request))
		}
		if _, err := writeConfig(dir, sc.config, map[string]string{"UPSTREAM": "http://127.0.0.1:1", "RECORDS": dir + "/r.jsonl", "REDIS_URL": ""}); err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		if _, err := selectScenarios(sc.name, false, false); err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
	}
	t.Chdir(t.TempDir())
	for _, sc := range agentScenarios() {
		if sc.run == nil && !strings.Contains(sc.skip, "e2e/testdata") {
			t.Fatalf("%s without its capture: skip %q", sc.name, sc.skip)
		}
	}
}
