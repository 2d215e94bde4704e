package responses

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/agenttraffic"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// rawInputCases are input arrays around the items parseInputRaw projects
// from their tokens: every way such an item can be odd, refused, or
// handed to the tree path.
func rawInputCases() []string {
	fc := `{"type":"function_call","id":"` + sealedID("fc_1") + `","call_id":"call_1","name":"exec","arguments":"{\"cmd\":\"ls\"}"}`
	out := `{"type":"function_call_output","call_id":"call_1","output":"a.txt\nb.txt"}`
	inputs := []string{
		fc + `,` + out,
		fc + `,` + fc + `,` + out + `,` + out,
		`{"role":"user","content":"go"},` + fc + `,` + out,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","status":"completed"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","status":null,"id":null,"namespace":null}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","status":"done"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","status":1}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","namespace":"crm"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","namespace":""}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","namespace":7}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","id":"fc_plain"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","id":""}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","id":"hgs1_x_forged"}`,
		`{"type":"function_call","call_id":"c","name":"n"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":{}}`,
		`{"type":"function_call","call_id":null,"name":"n","arguments":"{}"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","extra":{"a":1}}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","ID":"x"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","call_id":"d"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"\ud800"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"\ud83d\ude00 ok"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"bad ` + "\xff" + ` byte"}`,
		`{"type":"function_call_output","call_id":"c","output":"bad ` + "\xc3" + `"}`,
		`{"type":"function\u005fcall","c\u0061ll_id":"c","name":"n","arguments":"{}"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}"},{"type":"function_call","call_id":"c","name":"m","arguments":"[]"}`,
		`{"type":"function_call_output","call_id":"c","output":"x","id":"fco_1"}`,
		`{"type":"function_call_output","call_id":"c","output":"x","id":""}`,
		`{"type":"function_call_output","call_id":"c","output":"x","id":"` + sealedID("fco_1") + `"}`,
		`{"type":"function_call_output","call_id":"c","output":"x","id":"hgs1_x_forged"}`,
		`{"type":"function_call_output","call_id":"c","output":null}`,
		`{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"x"}]}`,
		`{"type":"function_call_output","call_id":"c","output":3}`,
		`{"type":"function_call_output","call_id":"c","output":"x","status":"incomplete"}`,
		`{"type":"function_call_output","call_id":"c","output":"x","status":"nope"}`,
		`{"type":"function_call_output","output":"x"}`,
		`{"type":"function_call_output","call_id":"c","output":"x","Output":"y"}`,
		`{"type":"message","role":"user","content":"hi"}`,
		`{"type":"message","role":"developer","content":"","status":"completed","phase":null}`,
		`{"type":"message","role":"assistant","content":"done","status":null,"phase":"final_answer"}`,
		`{"type":"message","role":"assistant","content":"done","phase":"later"}`,
		`{"type":"message","role":"user","content":"x","status":"done"}`,
		`{"type":"message","role":"tool","content":"x"}`,
		`{"type":"message","content":"x"}`,
		`{"type":"message","role":"user","content":null}`,
		`{"type":"message","role":"user","content":7}`,
		`{"type":"message","role":"user","content":"x","id":"msg_mine"}`,
		`{"type":"message","role":"user","content":"x","id":""}`,
		`{"type":"message","role":"user","content":"x","id":null}`,
		`{"type":"message","role":"assistant","content":"x","id":"msg_plain"}`,
		`{"type":"message","role":"assistant","content":"x","id":"` + sealedID("msg_1") + `"}`,
		`{"type":"message","role":"user","content":"x","id":"` + sealedID("msg_2") + `"}`,
		`{"type":"message","role":"user","content":"x","id":"hgs1_x_forged"}`,
		`{"type":"message","role":"user","content":"x","id":7}`,
		`{"type":"message","role":"user","content":"x","extra":"y"}`,
		`{"type":"message","role":"user","content":"x","Role":"user"}`,
		`{"type":"message","role":"user","content":"x","content":"y"}`,
		`{"type":"message","role":"user","content":"bad ` + "\xff" + ` byte"}`,
		`{"type":"message","role":"user","content":"\ud800"}`,
		`{"type":"mess\u0061ge","role":"us\u0065r","content":"\u0078"}`,
		`{"role":"user","content":"easy"}`,
		`{"role":"assistant","content":"easy","id":"` + sealedID("msg_3") + `"}`,
		`{"type":null,"role":"user","content":"null type"}`,
		`{"type":"","role":"user","content":"empty type"}`,
		`{"type":7,"role":"user","content":"number type"}`,
		`{"role":"user","content":[{"type":"input_text","text":"parts"}]}`,
		`"just a string"`,
		`[1,2]`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}"},{"role":"user","content":"a","role":"user"}`,
		`{"type":"function_call_output","call_id":"c","output":"x","status":"bad"},{"type":"function_call","call_id":"c","name":"n","arguments":"{}","id":"x","id":"y"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}"},{"type":"message","role":"user","content":[{"type":"input_text","text":"` + strings.Repeat("[", 3) + `"}]}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}"},{"type":"mystery","role":"user","data":{"k":[1,{"v":null}]}}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}"},{"type":"message","role":"user","content":"` + "\x01" + `"}`,
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{}","x":` + strings.Repeat("[", 130) + strings.Repeat("]", 130) + `}`,
	}
	var bodies []string
	for _, in := range inputs {
		bodies = append(bodies, `{"model":"m","input":[`+in+`]}`)
	}
	return append(bodies, codexRequest,
		`{"model":"m","input":[],"instructions":"x"}`,
		`{"model":"m","input":"hi"}`,
		`{"model":"m","input":[`+fc+`],"input":[]}`,
		`{"model":"m","tools":[{"type":"function","name":"f","parameters":{"a":1,"a":2}}],"input":[`+fc+`]}`,
	)
}

// TestRawInputMatchesTree: projecting the input item by item from its
// bytes accepts and refuses exactly what decoding it whole does, with the
// same errors, projection and upstream bytes.
func TestRawInputMatchesTree(t *testing.T) {
	bodies := rawInputCases()
	for _, fixture := range []string{agenttraffic.CodexFixture, "codex-requests.json"} {
		capture, err := agenttraffic.LoadCapture(filepath.Join("..", "..", "..", agenttraffic.CaptureDir), fixture, "/v1/responses")
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, string(capture))
		grown, err := agenttraffic.Codex(capture, 6, 16<<10, sealedID)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, string(grown))
	}
	for _, strict := range []bool{false, true} {
		for _, body := range bodies {
			compareRawAndTree(t, strict, []byte(body))
		}
	}
}

// FuzzRawInputMatchesTree is TestRawInputMatchesTree over any body.
func FuzzRawInputMatchesTree(f *testing.F) {
	for _, b := range rawInputCases() {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) { compareRawAndTree(t, false, body) })
}

// compareRawAndTree parses body on both paths and fails on any
// difference the caller could see.
func compareRawAndTree(t *testing.T, strict bool, body []byte) {
	t.Helper()
	raw := New(Options{Seal: testKeys, StrictMembers: strict})
	tree := New(Options{Seal: testKeys, StrictMembers: strict})
	tree.treeInput = true
	a, errA := raw.parseRequest(body)
	b, errB := tree.parseRequest(body)
	if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
		t.Fatalf("%.200s\nraw path: %v\ntree path: %v", body, errA, errB)
	}
	if errA != nil {
		return
	}
	if !jsonvalue.Equal(a.Messages(), b.Messages()) {
		x, _ := jsonvalue.Marshal(a.Messages())
		y, _ := jsonvalue.Marshal(b.Messages())
		t.Fatalf("%.200s\nraw projection %.400s\ntree projection %.400s", body, x, y)
	}
	if !reflect.DeepEqual(a.callIDs, b.callIDs) || !reflect.DeepEqual(a.up, b.up) || !reflect.DeepEqual(a.items, b.items) ||
		a.inputSpan != b.inputSpan || a.inputString != b.inputString || !reflect.DeepEqual(a.segs, b.segs) {
		t.Fatalf("%.200s\ninput state differs", body)
	}
	for _, target := range []any{nil, a.Messages()} {
		x, errX := a.UpstreamBody(target)
		y, errY := b.UpstreamBody(target)
		if string(x) != string(y) || (errX == nil) != (errY == nil) {
			t.Fatalf("%.200s\nupstream bodies differ:\n%.400s\n%.400s", body, x, y)
		}
	}
}
