package agenttraffic

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

var captures = filepath.Join("..", "..", CaptureDir)

// TestSizes: the grown requests are valid JSON of about the size asked,
// and the chat conversation grows by whole turns to about 84 KB.
func TestSizes(t *testing.T) {
	for _, c := range []struct {
		name, fixture, path string
		grow                func([]byte, int, int) ([]byte, error)
	}{
		{"codex", CodexFixture, "/v1/responses", func(c []byte, r, s int) ([]byte, error) {
			return Codex(c, r, s, func(id string) string { return "hgs1_sealed_" + id })
		}},
		{"claude code", ClaudeCodeFixture, "/v1/messages", ClaudeCode},
	} {
		capture, err := LoadCapture(captures, c.fixture, c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.grow(capture, 40, 84<<10)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) || len(b) < 84<<10-40 || len(b) > 84<<10+40 {
			t.Fatalf("%s: %d bytes (valid %v), want about %d", c.name, len(b), json.Valid(b), 84<<10)
		}
		t.Logf("%s: capture %d bytes, grown %d", c.name, len(capture), len(b))
	}
	turns := ChatTurns(50, ChatOutputBytes)
	for i := 1; i < len(turns); i++ {
		if len(turns[i]) <= len(turns[i-1]) || !json.Valid(turns[i]) {
			t.Fatalf("turn %d: %d bytes after %d", i+1, len(turns[i]), len(turns[i-1]))
		}
	}
	t.Logf("chat: turn 1 %d bytes, turn 50 %d", len(turns[0]), len(turns[49]))
}
