package messages

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/agenttraffic"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonmutate"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// rawMessagesSeeds are requests around the blocks parseMessagesRaw
// projects from their tokens: every way such a block can be odd, refused
// or handed to the tree path.
func rawMessagesSeeds(t testing.TB) []string {
	use := `{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la","description":"List"}}`
	res := `{"type":"tool_result","tool_use_id":"toolu_1","content":"a.txt\nb.txt"}`
	msgs := []string{
		`{"role":"user","content":"hi"}`,
		`{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":"there","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":[{"type":"text","text":"ok"},` + use + `]},{"role":"user","content":[` + res + `,{"type":"text","text":"next"}]}`,
		`{"role":"assistant","content":[` + use + `,` + use + `]},{"role":"user","content":[` + res + `,` + res + `]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":null,"is_error":true,"cache_control":{"type":"ephemeral","ttl":"1h"}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":false},{"type":"tool_result","tool_use_id":"u","is_error":null}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":1}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}]}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":7,"content":"x"}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x","toolset_name":"s"}]}`,
		`{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}`,
		`{"role":"system","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}`,
		`{"role":"user","content":[` + use + `]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"","input":{}}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f"}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":[]}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{"a":1,"a":2}}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{"s":"\ud800"}}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{},"caller":{"type":"direct"}}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{},"cache_control":{"type":"ephemeral"}}]}`,
		`{"role":"user","content":[{"type":"text","text":"a","citations":null}]}`,
		`{"role":"user","content":[{"type":"text"}]}`,
		`{"role":"user","content":[{"type":"text","text":5}]}`,
		`{"role":"user","content":[{"type":"text","text":"a","Text":"b"}]}`,
		`{"role":"user","content":[{"type":"text","text":"a","extra":{"k":[1]}}]}`,
		`{"role":"user","content":[{"type":"text","text":"bad ` + "\xff" + `"}]}`,
		`{"role":"user","content":[{"type":"text","text":"\ud83d\ude00 \u00e9 \"q\""}]}`,
		`{"role":"user","content":[{"type":"te\u0078t","t\u0065xt":"esc"}]}`,
		`{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}`,
		`{"role":"user","content":[]}`,
		`{"role":"assistant","content":[]}`,
		`{"role":"system","content":[{"type":"text","text":"s"}]}`,
		`{"role":"tool","content":"x"}`,
		`{"role":"user"}`,
		`{"role":"user","content":"a","role":"user"}`,
		`{"role":"user","content":"a","output_config":{"k":1}}`,
		`{"role":"user","content":5}`,
		`"not an object"`,
		`{"role":"user","content":[` + res + `]},{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}`,
		`{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"user","content":[{"type":"text","text":"` + strings.Repeat(`\n`, 300) + `"}]}`,
		`{"role":"user","content":[{"type":"text","text":"x","cache_control":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}]}`,
	}
	seeds := onePassSeeds(t.(*testing.T))
	for _, m := range msgs {
		seeds = append(seeds, `{"model":"m","max_tokens":9,"system":[{"type":"text","text":"s"}],"messages":[`+m+`]}`)
	}
	capture, err := agenttraffic.LoadCapture(filepath.Join("..", "..", "..", agenttraffic.CaptureDir), agenttraffic.ClaudeCodeFixture, "/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	grown, err := agenttraffic.ClaudeCode(capture, 6, 24<<10)
	if err != nil {
		t.Fatal(err)
	}
	return append(seeds, string(capture), string(grown), `{"model":"m","max_tokens":9,"messages":[]}`, `{"model":"m","max_tokens":9,"messages":{}}`)
}

// TestRawMessagesMatchTree: projecting the conversation message by
// message from its bytes accepts and refuses exactly what decoding it
// whole does, with the same errors, projection, pool, seal edits and
// upstream bytes, on the seeds and mutations of them.
func TestRawMessagesMatchTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 5))
	n := 400
	if testing.Short() {
		n = 40
	}
	keys := seal.Ephemeral()
	for _, strict := range []bool{false, true} {
		for _, seed := range rawMessagesSeeds(t) {
			body := []byte(seed)
			compareRawAndTree(t, keys, strict, body)
			for range n {
				compareRawAndTree(t, keys, strict, jsonmutate.Bytes(rng, body))
			}
		}
	}
}

// compareRawAndTree parses body on both paths and fails on any difference
// the caller or the write-back could see.
func compareRawAndTree(t *testing.T, keys *seal.Keyring, strict bool, body []byte) {
	t.Helper()
	raw := New(Options{Seal: keys, StrictMembers: strict})
	tree := New(Options{Seal: keys, StrictMembers: strict})
	tree.treeMessages = true
	a, errA := raw.parseWith(body, wire.OpMessages, nil, nil)
	b, errB := tree.parseWith(body, wire.OpMessages, nil, nil)
	if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
		t.Fatalf("%.300q\nraw path: %v\ntree path: %v", body, errA, errB)
	}
	if errA != nil {
		return
	}
	if !jsonvalue.Equal(any(a.Messages()), any(b.Messages())) || !jsonvalue.Equal(any(a.Params()), any(b.Params())) ||
		!jsonvalue.Equal(any(a.Tools()), any(b.Tools())) {
		x, _ := jsonvalue.Marshal(a.Messages())
		y, _ := jsonvalue.Marshal(b.Messages())
		t.Fatalf("%.300q\nraw projection %.600s\ntree projection %.600s", body, x, y)
	}
	if a.msgSpan != b.msgSpan || len(a.msgRaw) != len(b.msgRaw) || len(a.groups) != len(b.groups) || len(a.edits) != len(b.edits) || string(a.body) != string(b.body) {
		t.Fatalf("%.300q\nspans, groups, seal edits or body differ", body)
	}
	for i := range a.msgRaw {
		if a.msgRaw[i] != b.msgRaw[i] {
			t.Fatalf("%.300q\nmessage span %d differs", body, i)
		}
	}
	for k := range a.pool.entries {
		ea, eb := a.pool.entries[k], b.pool.entries[k]
		if len(ea) != len(eb) {
			t.Fatalf("%.300q\npool %d: %d entries, tree %d", body, k, len(ea), len(eb))
		}
		for i := range ea {
			if ea[i].span != eb[i].span || string(ea[i].raw) != string(eb[i].raw) || !jsonvalue.Equal(ea[i].proj, eb[i].proj) {
				t.Fatalf("%.300q\npool %d entry %d differs", body, k, i)
			}
		}
	}
	for _, target := range []any{nil, a.Messages()} {
		x, errX := a.UpstreamBody(target)
		y, errY := b.UpstreamBody(target)
		if string(x) != string(y) || (errX == nil) != (errY == nil) {
			t.Fatalf("%.300q\nupstream bodies differ", body)
		}
	}
}
