package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verifyRun runs "hooks-gateway records ARGS..." and returns its exit
// status, stdout and stderr.
func verifyRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"records"}, args...), &stdout, &stderr, nil)
	return code, stdout.String(), stderr.String()
}

// trailRecord is one record line for session s at sequence seq.
func trailRecord(s string, seq int, point string) string {
	return fmt.Sprintf(`{"interception_point":%q,"mode":"enforce","verdict":{"decision":"allow"},"input_identity":null,"enforced_identity":null,"identity_provider":null,"session_id":%q,"sequence":%d,"decided_by":null,"composition":{"profile":"sequential/first_deny"},"interceptors_registered":1}`+"\n", point, s, seq)
}

func writeTrail(t *testing.T, dir, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRecordsVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	clean := writeTrail(t, dir, "clean.jsonl",
		trailRecord("a", 0, "agent_startup"), trailRecord("b", 0, "agent_startup"),
		trailRecord("a", 1, "input"), trailRecord("b", 1, "agent_shutdown"), trailRecord("a", 2, "agent_shutdown"))
	broken := writeTrail(t, dir, "broken.jsonl",
		trailRecord("a", 0, "agent_startup"), trailRecord("a", 2, "input"), "garbage\n", trailRecord("a", 2, "agent_shutdown"))
	// A rotated pair given newest first: verify reads .1 before the live file.
	rotated := writeTrail(t, dir, "r.jsonl.1", trailRecord("r", 0, "agent_startup"), trailRecord("r", 1, "input"))
	live := writeTrail(t, dir, "r.jsonl", trailRecord("r", 2, "agent_shutdown"))
	open := writeTrail(t, dir, "open.jsonl", trailRecord("o", 0, "agent_startup"))

	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string // lines expected, in order
		stderrHas  string
		stdoutNone bool
	}{
		{"clean", []string{"verify", clean}, 0, []string{"1 file, 5 records in 2 sessions: 0 problems, 0 warnings"}, "", false},
		{"problems", []string{"verify", broken}, 1, []string{
			broken + `:2: error: session "a": gap: sequence 1 missing (sequence jumps from 0 to 2)`,
			broken + ":3: error: not an interception record: invalid JSON at byte 1",
			broken + `:4: error: session "a": duplicate sequence 2`,
			"1 file, 3 records in 1 session: 3 problems, 0 warnings",
		}, "", false},
		{"rotated files in order", []string{"verify", live, rotated}, 0, []string{"2 files, 3 records in 1 session: 0 problems, 0 warnings"}, "", false},
		{"warnings pass", []string{"verify", open}, 0, []string{
			open + `:1: warning: session "o": never reaches agent_shutdown (highest sequence 0); the session may still be open, or the trail cut`,
			"1 file, 1 record in 1 session: 0 problems, 1 warning",
		}, "", false},
		{"warnings fail with --strict", []string{"verify", "--strict", open}, 1, nil, "", false},
		{"no subcommand", nil, 2, nil, "Usage:", true},
		{"unknown subcommand", []string{"check", clean}, 2, nil, `unknown subcommand "check"`, true},
		{"no files", []string{"verify"}, 2, nil, "no files given", true},
		{"bad flag", []string{"verify", "--nope", clean}, 2, nil, "flag provided but not defined", true},
		{"missing file", []string{"verify", filepath.Join(dir, "absent.jsonl")}, 2, nil, "no such file", true},
		{"help", []string{"verify", "-h"}, 0, nil, "Usage:", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := verifyRun(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if tt.stdout != nil {
				if got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tt.stdout, "\n") {
					t.Errorf("stdout:\n%s\nwant:\n%s", stdout, strings.Join(tt.stdout, "\n"))
				}
			}
			if tt.stdoutNone && stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.Contains(stderr, tt.stderrHas) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.stderrHas)
			}
		})
	}
}

// TestGatewayTrailVerifies serves requests with a rotating jsonl sink,
// stops the gateway, and verifies the trail it left.
func TestGatewayTrailVerifies(t *testing.T) {
	dir := t.TempDir()
	trail := filepath.Join(dir, "records.jsonl")
	cfg := writeConfig(t, strings.Replace(mockConfig, "    - type: stdout\n",
		"    - type: jsonl\n      path: "+trail+"\n      max_bytes: 1KiB\n      max_files: 50\n", 1))
	g := start(t, "--config", cfg)
	for i := range 4 {
		status, body, err := chat(context.Background(), g.addr, fmt.Sprintf("hello %d", i))
		if err != nil || status != http.StatusOK {
			t.Fatalf("chat: %d %v %s", status, err, body)
		}
	}
	if code := g.stop(t); code != 0 {
		t.Fatalf("gateway exited %d; stderr:\n%s", code, g.stderr.String())
	}
	files, _ := filepath.Glob(trail + "*")
	if len(files) < 2 {
		t.Fatalf("files %v: the trail did not rotate", files)
	}
	code, stdout, stderr := verifyRun(t, append([]string{"verify", "--strict"}, files...)...)
	if code != 0 || !strings.Contains(stdout, "in 4 sessions: 0 problems, 0 warnings") {
		t.Fatalf("verify exited %d:\n%s%s", code, stdout, stderr)
	}
}
