// Package agenttraffic builds model-call requests in the shape coding
// agents send: a Codex Responses request carrying its whole history
// (store: false), a Claude Code Messages request with its system prompt
// and tool set, and a chat-completions conversation growing turn by turn.
// The Codex and Claude Code requests start from a real capture (the e2e
// fixtures TestCapturedRequests replays) and are grown with generated tool
// rounds of code and shell output to a chosen size; the chat conversation
// is generated whole. The bench (go run ./bench) and the proxy package's
// benchmarks measure the same bytes.
//
// Every builder is deterministic: the same arguments give the same bytes.
package agenttraffic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Fixture files under e2e/testdata.
const (
	CodexFixture      = "codex-gpt-5.5-requests.json"
	ClaudeCodeFixture = "claude-code-requests.json"
)

// CaptureDir is e2e/testdata relative to the module root.
const CaptureDir = "e2e/testdata"

// captured is one request of a fixture file (the recorder's format).
type captured struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Body   string `json:"body"`
}

// LoadCapture reads fixture (a file name under dir) and returns the body
// of its last request to path: the one carrying the most history.
func LoadCapture(dir, fixture, path string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, fixture))
	if err != nil {
		return nil, err
	}
	var reqs []captured
	if err := json.Unmarshal(b, &reqs); err != nil {
		return nil, fmt.Errorf("%s: %w", fixture, err)
	}
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Path == path && reqs[i].Body != "" {
			return []byte(reqs[i].Body), nil
		}
	}
	return nil, fmt.Errorf("%s: no request to %s", fixture, path)
}

// ItemIDSealKind is the seal kind of a Responses item id the gateway
// hands out (internal/wire/responses' kindItemID): a client hands back
// the ids of model-written items (function calls, assistant messages,
// reasoning) as the gateway's seals of them.
const ItemIDSealKind = "responses.item.id"

// Codex grows a captured Codex Responses request (its developer
// instructions, tool declarations and first tool round kept as captured)
// with rounds more tool rounds — a function_call of exec_command and its
// function_call_output of code or shell output — to about size bytes, and
// sets stream to false (the answer's cost is not what it measures).
// sealID gives the id a client holds for a model-written item's id (the
// gateway's seal of it, as the gateway answered it); nil drops those ids.
func Codex(capture []byte, rounds, size int, sealID func(string) string) ([]byte, error) {
	modelID := func(it map[string]any, id string) {
		if sealID == nil {
			delete(it, "id")
			return
		}
		it["id"] = sealID(id)
	}
	return grow(capture, rounds, size, func(req map[string]any, outLen int) error {
		input, ok := req["input"].([]any)
		if !ok {
			return errors.New("codex capture: no input array")
		}
		for _, v := range input {
			it, _ := v.(map[string]any)
			id, _ := it["id"].(string)
			if id == "" {
				continue
			}
			switch it["type"] {
			case "function_call", "custom_tool_call", "reasoning":
				modelID(it, id)
			case "message":
				if it["role"] == "assistant" {
					modelID(it, id)
				}
			}
		}
		for i := range rounds {
			call := fmt.Sprintf("call_bench_%02d", i)
			fc := map[string]any{"type": "function_call", "status": "completed",
				"name": "exec_command", "arguments": mustJSON(map[string]any{"cmd": command(i), "yield_time_ms": 10000}), "call_id": call}
			modelID(fc, fmt.Sprintf("fc_bench_%02d", i))
			input = append(input, fc,
				map[string]any{"type": "function_call_output", "id": fmt.Sprintf("fco_bench_%02d", i), "call_id": call,
					"output": fmt.Sprintf("Chunk ID: %06x\nWall time: 0.0%d12 seconds\nProcess exited with code 0\nOutput:\n%s", 0xa1b2c3+i, i%10, toolOutput(i, outLen))},
			)
		}
		req["input"] = input
		return nil
	})
}

// ClaudeCode grows a captured Claude Code Messages request (its system
// prompt, tool set and first tool round kept as captured) with rounds more
// Bash tool rounds — an assistant tool_use and the user's tool_result of
// code or shell output — to about size bytes, and sets stream to false.
func ClaudeCode(capture []byte, rounds, size int) ([]byte, error) {
	return grow(capture, rounds, size, func(req map[string]any, outLen int) error {
		msgs, ok := req["messages"].([]any)
		if !ok {
			return errors.New("claude code capture: no messages array")
		}
		for i := range rounds {
			id := fmt.Sprintf("toolu_bench_%02d", i)
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": []any{
					map[string]any{"type": "text", "text": fmt.Sprintf("Let me look at step %d.", i)},
					map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": command(i), "description": fmt.Sprintf("Inspect step %d", i)}},
				}},
				map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": id, "content": toolOutput(i, outLen), "is_error": false},
				}},
			)
		}
		req["messages"] = msgs
		return nil
	})
}

// grow decodes capture, lets add append the rounds with tool outputs of
// outLen bytes, and searches outLen so the compact request is about size
// bytes (within a few bytes per round).
func grow(capture []byte, rounds, size int, add func(req map[string]any, outLen int) error) ([]byte, error) {
	build := func(outLen int) ([]byte, error) {
		var req map[string]any
		dec := json.NewDecoder(bytes.NewReader(capture))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			return nil, err
		}
		req["stream"] = false
		if err := add(req, outLen); err != nil {
			return nil, err
		}
		return compact(req)
	}
	outLen := 64
	b, err := build(outLen)
	if err != nil {
		return nil, err
	}
	if rounds <= 0 {
		return b, nil
	}
	for range 3 { // output lengths change the size linearly (escaping aside)
		if len(b) >= size-rounds && len(b) <= size+rounds {
			break
		}
		outLen = max(16, outLen+(size-len(b))/rounds)
		if b, err = build(outLen); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// compact is v as JSON without HTML escaping (as the agents send it).
func compact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func mustJSON(v any) string {
	b, err := compact(v)
	if err != nil {
		panic(err) // static shapes
	}
	return string(b)
}

// command is the i-th round's shell command.
func command(i int) string {
	switch i % 4 {
	case 0:
		return fmt.Sprintf("sed -n '%d,%dp' internal/store/shard_%d.go", 40*i+1, 40*i+40, i)
	case 1:
		return fmt.Sprintf("go test ./internal/store/... -run TestShard%d -count=1", i)
	case 2:
		return fmt.Sprintf("rg -n 'func .*Shard%d' --type go", i)
	default:
		return fmt.Sprintf("git diff --stat HEAD~%d", i%7+1)
	}
}

// toolOutput is about n bytes of the i-th round's output: Go source, test
// output or search results, different in every round.
func toolOutput(i, n int) string {
	var b strings.Builder
	for line := 0; b.Len() < n; line++ {
		switch i % 4 {
		case 0, 2:
			fmt.Fprintf(&b, "%d:\tif err := s.shard%d.put(ctx, key%d, val[%d:]); err != nil {\n", 40*i+line+1, i, line, line)
			fmt.Fprintf(&b, "%d:\t\treturn fmt.Errorf(\"shard %d: put %%q: %%w\", key%d, err)\n%d:\t}\n", 40*i+line+2, i, line, 40*i+line+3)
		case 1:
			fmt.Fprintf(&b, "=== RUN   TestShard%d/case_%02d\n--- PASS: TestShard%d/case_%02d (0.0%ds)\n", i, line, i, line, line%10)
		default:
			fmt.Fprintf(&b, " internal/store/shard_%d_%d.go | %2d ++++++++--\n", i, line, line%40+3)
		}
	}
	return b.String()[:n]
}

// chatTools are the chat conversation's tool declarations: a coding
// agent's eight.
func chatTools() []any {
	tool := func(name, desc string, props ...string) any {
		p := map[string]any{}
		for _, k := range props {
			p[k] = map[string]any{"type": "string", "description": "The " + strings.ReplaceAll(k, "_", " ") + " to use for this call; see the tool's description for the accepted forms."}
		}
		return map[string]any{"type": "function", "function": map[string]any{"name": name, "description": desc,
			"parameters": map[string]any{"type": "object", "properties": p, "required": props[:1], "additionalProperties": false}}}
	}
	return []any{
		tool("exec_command", "Runs a shell command in the workspace and returns its output, exit code and wall time. Use for builds, tests and inspection; prefer rg over grep.", "cmd", "workdir"),
		tool("read_file", "Reads a file of the workspace, optionally a range of its lines, and returns it with line numbers.", "path", "range"),
		tool("write_file", "Writes a file of the workspace whole, creating its directories. Prefer apply_patch for edits.", "path", "content"),
		tool("apply_patch", "Applies a patch in the agent patch format to files of the workspace and reports the files changed.", "patch"),
		tool("list_dir", "Lists a directory of the workspace, with sizes and kinds, to a given depth.", "path", "depth"),
		tool("search", "Searches the workspace for a regular expression and returns the matching lines with their files.", "pattern", "path"),
		tool("web_fetch", "Fetches a URL and returns its text, for documentation the workspace does not hold.", "url"),
		tool("update_plan", "Records the plan of the task as steps with their status, shown to the user.", "plan", "explanation"),
	}
}

// chatSystem is the chat conversation's system prompt (about 4 KB).
func chatSystem() string {
	var b strings.Builder
	b.WriteString("You are a coding agent working in the user's repository. You read code, run commands and make changes with the tools you are given.\n\n")
	for i := 0; b.Len() < 4000; i++ {
		fmt.Fprintf(&b, "- Rule %d: keep changes small and focused on the task; run the tests that cover what you changed; explain what you did and what you did not verify.\n", i+1)
	}
	return b.String()
}

// ChatTurns is a chat-completions conversation of n turns in one
// session: turn 1 is the system prompt, eight tool declarations and the
// user's task; turn k+1 is turn k's messages plus the assistant's answer
// to it (a tool call, or text every fifth turn) and a new message (the
// tool's output of about outLen bytes, or the user's next instruction).
// ChatTurns(n, outLen)[k-1] is turn k's request body (stream false).
func ChatTurns(n, outLen int) [][]byte {
	msgs := []any{
		map[string]any{"role": "system", "content": chatSystem()},
		map[string]any{"role": "user", "content": "The store's shard rebalancing loses writes under load. Find why, fix it and add a test."},
	}
	out := make([][]byte, 0, n)
	for k := 1; k <= n; k++ {
		b, err := compact(map[string]any{"model": "gpt-bench", "temperature": 0.2, "stream": false, "tools": chatTools(), "messages": msgs})
		if err != nil {
			panic(err) // static shapes
		}
		out = append(out, b)
		i := k - 1
		if k%5 == 0 {
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": fmt.Sprintf("Step %d done: the shard %d tests pass. Next I will look at the rebalancer's handoff.", k, i)},
				map[string]any{"role": "user", "content": fmt.Sprintf("Good. Before step %d, check that the handoff holds the lock while it copies.", k+1)})
			continue
		}
		id := fmt.Sprintf("call_%02d", k)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": "exec_command", "arguments": mustJSON(map[string]any{"cmd": command(i)})}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": toolOutput(i, outLen)})
	}
	return out
}

// ChatOutputBytes is the tool output of ChatTurns' rounds that puts turn
// 50 at about 84 KB.
const ChatOutputBytes = 1530
