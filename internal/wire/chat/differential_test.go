package chat

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
)

// The differential stream test: every corpus file under testdata/streams is
// raw upstream SSE. Two official clients assemble it — openai-go's
// ChatCompletionAccumulator (behind the client's own ssestream decoder,
// over a real HTTP server) and the openai JS SDK's ChatCompletionStream
// (e2e/node/accumulate-chat.mjs) — and the gateway assembles it with
// ReadStream. Three checks per file:
//
//  1. agreement: whatever the two clients agree on (failure, content,
//     refusal, reasoning, finish_reason, tool-call count, id, name and
//     arguments per index), the gateway's projection says too;
//  2. coverage: the projected text channels equal the concatenation of
//     every delta the clients' decoders delivered — what an application
//     printing deltas shows, whatever its accumulator keeps;
//  3. release: the bytes the gateway releases on allow (Replay), assembled
//     again by each client, give exactly the projected tool calls, and
//     show no text the projection lacks. A client that throws on them
//     executes nothing and passes.
//
// Where the clients disagree, checks 2 and 3 decide what is safe: the policy
// must have seen every text a client can surface and every tool call a
// client can execute. Where they disagree on what would be executed (one
// throws, or their tool calls differ), refusing the stream is safe too.
// The disagreements observed, and the safe gateway output for each, are
// recorded in clientDisagreements; the test fails when the observed ones
// change, so the table stays true when either SDK is upgraded.

const (
	streamCorpusDir = "testdata/streams"
	nodeHarnessDir  = "../../../e2e/node"
	corpusLimit     = 1 << 20
)

// clientDisagreements records, per corpus file, the fields on which
// openai-go v3.98.0 and the openai JS SDK 7.59.0 assemble the same bytes
// differently (fields as named by disagreement), why, and what gateway
// output is safe. Files not listed are assembled identically by both, and
// the gateway must assemble them the same way.
var clientDisagreements = map[string]struct {
	fields    []string
	why, safe string
}{
	"tool_name_fragmented.sse": {
		fields: []string{"tool_calls.name"},
		why:    "openai-go concatenates name fragments (search_users_admin); the JS SDK keeps the last fragment (users_admin)",
		safe:   "refuse; or project one name and release a stream both clients assemble to it (a raw replay cannot be that)",
	},
	"tool_name_repeated.sse": {
		fields: []string{"tool_calls.name"},
		why:    "a name repeated on every fragment: openai-go concatenates (lookuplookup), the JS SDK keeps the last (lookup)",
		safe:   "refuse; or project one name and release a stream both clients assemble to it",
	},
	"tool_call_without_index.sse": {
		fields: []string{"error"},
		why:    "the JS SDK throws on a tool-call fragment without index; openai-go files it under index 0",
		safe:   "what openai-go executes (one call at index 0), or refuse",
	},
	"tool_calls_without_index_two_ids.sse": {
		fields: []string{"error"},
		why:    "the JS SDK throws on a missing index; openai-go folds both calls into index 0 (names and arguments concatenated, last id)",
		safe:   "refuse, or exactly what openai-go executes (one merged call): two separate calls let openai-go run a name no policy saw",
	},
	"tool_call_index_minus_one.sse": {
		fields: []string{"error"},
		why:    "the JS SDK throws on index -1; openai-go reads it as 0 (Bedrock compatibility)",
		safe:   "what openai-go executes (index 0), or refuse",
	},
	"reasoning.sse": {
		fields: []string{"reasoning"},
		why:    "openai-go keeps no reasoning; the JS SDK copies the unknown delta member onto the message, so it keeps the last fragment",
		safe:   "the concatenation of every fragment, which an application printing deltas shows",
	},
	"reasoning_content.sse": {
		fields: []string{"reasoning"},
		why:    "openai-go keeps no reasoning_content; the JS SDK keeps the last fragment",
		safe:   "the concatenation of every fragment, which an application printing deltas shows",
	},
	"chunk_id_changes.sse": {
		fields: []string{"content", "finish_reason"},
		why:    "openai-go's accumulator rejects every chunk whose id differs from the first (AddChunk false): first half, no finish_reason; the JS SDK adopts the new id and goes on",
		safe:   "the union: both halves",
	},
	"cr_framing.sse": {
		fields: []string{"content", "finish_reason", "streamed.content"},
		why:    "openai-go's decoder splits lines on LF only: the CR-framed stream is one line, no event is dispatched, and the client reports an empty message without error; the JS SDK splits on CR",
		safe:   "the content the JS SDK decodes",
	},
	"bom_prefix.sse": {
		fields: []string{"content", "streamed.content"},
		why:    "openai-go keeps a leading BOM in the first field name, so the first event has no data and its text is lost; the JS SDK decodes the BOM away",
		safe:   "the whole content, the first event's included",
	},
	"event_only_ping.sse": {
		fields: []string{"error", "streamed.content"},
		why:    "the JS SDK dispatches an event that has no data line and fails to parse its empty data as JSON; openai-go skips it",
		safe:   "the content openai-go decodes",
	},
}

// assembled is one assembler's view of a stream, normalized: the final
// message of choice 0 (text channels null when absent or empty) and the
// text of every delta the decoder delivered; or the error it failed with.
type assembled struct {
	Error        string          `json:"error,omitempty"`
	Content      *string         `json:"content"`
	Refusal      *string         `json:"refusal"`
	Reasoning    *string         `json:"reasoning"`
	ToolCalls    []assembledCall `json:"tool_calls"`
	FinishReason *string         `json:"finish_reason"`
	Streamed     streamedText    `json:"streamed"`
	// Rejected counts chunks openai-go's accumulator refused (AddChunk false).
	Rejected int `json:"-"`
}

type assembledCall struct {
	Index     int    `json:"index"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// streamedText is the concatenation of every delta of choice 0.
type streamedText struct {
	Content   *string `json:"content"`
	Refusal   *string `json:"refusal"`
	Reasoning *string `json:"reasoning"`
}

func (a assembled) failed() bool { return a.Error != "" }

// nonEmpty returns &s, or nil for "": absent and empty text are the same
// for policy and some assemblers cannot tell them apart.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func show(s *string) string {
	if s == nil {
		return "null"
	}
	b, _ := json.Marshal(*s)
	return string(b)
}

func TestStreamAssemblyMatchesOfficialClients(t *testing.T) {
	files, raws := readCorpus(t)
	if len(files) < 25 {
		t.Fatalf("corpus has %d streams, want at least 25", len(files))
	}
	for f := range clientDisagreements {
		if !slices.Contains(files, f) {
			t.Errorf("clientDisagreements names %s, which is not in the corpus", f)
		}
	}
	goClient := newGoClientServer(t, files, raws)
	js := runJSHarness(t, streamCorpusDir)

	gateway := make(map[string]assembled, len(files))
	released := make(map[string][]byte, len(files))
	for i, f := range files {
		gateway[f], released[f] = assembleWithGateway(t, raws[i])
	}
	goReleased := newGoClientServer(t, files, releasedBodies(files, released))
	jsReleased := runJSHarness(t, writeReleased(t, released))

	for _, f := range files {
		t.Run(strings.TrimSuffix(f, ".sse"), func(t *testing.T) {
			goView := goClient.assemble(t, f)
			if goView.Rejected > 0 {
				t.Logf("openai-go's accumulator rejected %d chunk(s)", goView.Rejected)
			}
			clients := map[string]assembled{"openai-go": goView}
			disagree := clientDisagreements[f].fields
			if js != nil {
				jsView, ok := js[f]
				if !ok {
					t.Fatal("the node harness reported nothing for this file")
				}
				clients["openai-js"] = jsView
				disagree = disagreement(goView, jsView)
				if want := clientDisagreements[f].fields; !slices.Equal(disagree, want) {
					t.Errorf("clients disagree on %v, the table records %v: update clientDisagreements", disagree, want)
				}
				if len(disagree) > 0 {
					t.Logf("clients disagree on %v: %s\n  openai-go: %s\n  openai-js: %s\n  safe gateway output: %s",
						disagree, clientDisagreements[f].why, dump(goView), dump(jsView), clientDisagreements[f].safe)
				}
			}
			g := gateway[f]
			checkAgreement(t, g, clients, disagree)
			checkCoverage(t, g, clients, disagree)
			if g.failed() {
				return // nothing released
			}
			again := map[string]assembled{"openai-go": goReleased.assemble(t, f)}
			if jsReleased != nil {
				again["openai-js"] = jsReleased[f] // present: the file was released
			}
			checkRelease(t, g, again)
		})
	}
}

// readCorpus returns the corpus file names (sorted) and their bytes.
func readCorpus(t *testing.T) ([]string, [][]byte) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(streamCorpusDir, "*.sse"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	files := make([]string, len(paths))
	raws := make([][]byte, len(paths))
	for i, p := range paths {
		files[i] = filepath.Base(p)
		if raws[i], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	return files, raws
}

// assembleWithGateway runs ReadStream and normalizes the projection; it also
// returns the bytes Release releases on allow (nil when ReadStream fails).
func assembleWithGateway(t *testing.T, raw []byte) (assembled, []byte) {
	t.Helper()
	s, err := ReadStream(bytes.NewReader(raw), corpusLimit, ResponseOptions{})
	if err != nil {
		return assembled{Error: err.Error()}, nil
	}
	out, err := s.Release(nil, true)
	if err != nil {
		t.Fatalf("Release: %v", err)
	}
	return normalizeProjection(t, s.Response()), out
}

// normalizeProjection reads Project() in either content form: a string
// (or null), or the array of part objects — text parts are the content,
// refusal parts the refusal, reasoning parts the reasoning.
func normalizeProjection(t *testing.T, r *Response) assembled {
	t.Helper()
	p := r.Project()
	var a assembled
	switch c := p["content"].(type) {
	case nil:
	case string:
		a.Content = nonEmpty(c)
	case []any:
		var text, refusal, reasoning strings.Builder
		for i, part := range c {
			m, _ := part.(map[string]any)
			s := func(key string) string { v, _ := m[key].(string); return v }
			switch m["type"] {
			case "text":
				text.WriteString(s("text"))
			case "refusal":
				refusal.WriteString(s("refusal"))
			case "reasoning":
				reasoning.WriteString(s("text"))
			default:
				t.Errorf("content[%d] has an unknown part type %v", i, m["type"])
			}
		}
		a.Content, a.Refusal, a.Reasoning = nonEmpty(text.String()), nonEmpty(refusal.String()), nonEmpty(reasoning.String())
	default:
		t.Fatalf("projected content is a %T", c)
	}
	calls, _ := p["tool_calls"].([]any)
	args := r.wireArguments()
	if len(args) != len(calls) {
		t.Fatalf("%d projected tool calls, %d wire argument strings", len(calls), len(args))
	}
	for i, c := range calls {
		m, _ := c.(map[string]any)
		id, _ := m["id"].(string)
		name, _ := m["name"].(string)
		a.ToolCalls = append(a.ToolCalls, assembledCall{Index: i, ID: id, Name: name, Arguments: args[i]})
	}
	if f, ok := p["finish_reason"].(string); ok {
		a.FinishReason = &f
	}
	a.Streamed = streamedText{Content: a.Content, Refusal: a.Refusal, Reasoning: a.Reasoning}
	return a
}

// goClientServer serves each stream at /<file>/chat/completions, so the
// openai-go client reads it exactly as it reads an upstream.
type goClientServer struct{ url string }

func newGoClientServer(t *testing.T, files []string, bodies [][]byte) goClientServer {
	t.Helper()
	byPath := make(map[string][]byte, len(files))
	for i, f := range files {
		byPath["/"+f+"/chat/completions"] = bodies[i]
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := byPath[r.URL.Path]
		if !ok || body == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return goClientServer{url: srv.URL}
}

// assemble streams file through openai-go's client and accumulator.
func (s goClientServer) assemble(t *testing.T, file string) assembled {
	t.Helper()
	client := openai.NewClient(
		option.WithBaseURL(s.url+"/"+file+"/"),
		option.WithAPIKey("unused"),
		option.WithMaxRetries(0),
	)
	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	var a assembled
	var text, refusal, reasoning strings.Builder
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			a.Rejected++
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			text.WriteString(c.Delta.Content)
			refusal.WriteString(c.Delta.Refusal)
			reasoning.WriteString(reasoningOf(c.Delta.JSON.ExtraFields))
		}
	}
	a.Streamed = streamedText{nonEmpty(text.String()), nonEmpty(refusal.String()), nonEmpty(reasoning.String())}
	if err := stream.Err(); err != nil {
		a.Error = err.Error()
		return a
	}
	if len(acc.Choices) == 0 {
		return a
	}
	choice := acc.Choices[0]
	msg := choice.Message
	a.Content, a.Refusal = nonEmpty(msg.Content), nonEmpty(msg.Refusal)
	// The accumulator copies no unknown delta member onto the message, so
	// this stays null today; it is read in case a later version keeps them.
	a.Reasoning = nonEmpty(reasoningOf(msg.JSON.ExtraFields))
	a.FinishReason = nonEmpty(choice.FinishReason)
	for i, c := range msg.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, assembledCall{Index: i, ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return a
}

// reasoningOf concatenates the reasoning_content and reasoning members
// (the two spellings providers use) of a delta or message.
func reasoningOf(extra map[string]respjson.Field) string {
	var out string
	for _, key := range []string{"reasoning_content", "reasoning"} {
		var s string
		if f, ok := extra[key]; ok && json.Unmarshal([]byte(f.Raw()), &s) == nil {
			out += s
		}
	}
	return out
}

// runJSHarness runs the JS SDK over every .sse file of dir. Without node or
// the harness's node_modules it returns nil (the table then stands in for
// the JS side), except under CI=true, where that is a failure.
func runJSHarness(t *testing.T, dir string) map[string]assembled {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(nodeHarnessDir, "node_modules", "openai", "package.json"))
	}
	if err != nil {
		msg := "the JS SDK side needs node and e2e/node/node_modules (run npm ci in e2e/node): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Log("skipping the JS SDK side: " + msg)
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), node, "accumulate-chat.mjs", abs)
	cmd.Dir = nodeHarnessDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node accumulate-chat.mjs: %v\n%s", err, stderr.String())
	}
	var views map[string]assembled
	if err := json.Unmarshal(out, &views); err != nil {
		t.Fatalf("node output: %v", err)
	}
	return views
}

// writeReleased writes each released stream under its corpus name into a
// fresh directory (streams the gateway refused are left out).
func writeReleased(t *testing.T, released map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for f, b := range released {
		if b == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func releasedBodies(files []string, released map[string][]byte) [][]byte {
	out := make([][]byte, len(files))
	for i, f := range files {
		out[i] = released[f]
	}
	return out
}

// disagreement lists the fields on which two views differ, in a fixed
// order: "error" (exactly one failed), the message fields (when both
// succeeded), "tool_calls" (count) or "tool_calls.id/name/arguments", then
// "streamed.*" (the decoders delivered different delta text).
func disagreement(a, b assembled) []string {
	var out []string
	add := func(field string, differ bool) {
		if differ {
			out = append(out, field)
		}
	}
	add("error", a.failed() != b.failed())
	if !a.failed() && !b.failed() {
		add("content", !eqText(a.Content, b.Content))
		add("refusal", !eqText(a.Refusal, b.Refusal))
		add("reasoning", !eqText(a.Reasoning, b.Reasoning))
		add("finish_reason", !eqText(a.FinishReason, b.FinishReason))
		out = append(out, callDisagreement(a.ToolCalls, b.ToolCalls)...)
	}
	add("streamed.content", !eqText(a.Streamed.Content, b.Streamed.Content))
	add("streamed.refusal", !eqText(a.Streamed.Refusal, b.Streamed.Refusal))
	add("streamed.reasoning", !eqText(a.Streamed.Reasoning, b.Streamed.Reasoning))
	return out
}

func callDisagreement(a, b []assembledCall) []string {
	if len(a) != len(b) {
		return []string{"tool_calls"}
	}
	var id, name, args bool
	for i := range a {
		id = id || a[i].ID != b[i].ID
		name = name || a[i].Name != b[i].Name
		args = args || a[i].Arguments != b[i].Arguments
	}
	var out []string
	for _, d := range []struct {
		field  string
		differ bool
	}{{"tool_calls.id", id}, {"tool_calls.name", name}, {"tool_calls.arguments", args}} {
		if d.differ {
			out = append(out, d.field)
		}
	}
	return out
}

func eqText(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// checkAgreement: where every client agrees, the gateway agrees. Refusing
// the stream is also accepted where the clients disagree on what would be
// executed (one fails, or their tool calls differ): fail-closed is safe
// there, and no single projection matches both.
func checkAgreement(t *testing.T, g assembled, clients map[string]assembled, disagree []string) {
	t.Helper()
	ambiguous := slices.ContainsFunc(disagree, func(f string) bool {
		return f == "error" || strings.HasPrefix(f, "tool_calls")
	})
	// openai-go's view stands for every field the clients agree on.
	ref := clients["openai-go"]
	switch {
	case g.failed() && ambiguous:
		t.Logf("the gateway refuses an ambiguous stream: %s", g.Error)
		return
	case slices.Contains(disagree, "error"):
		return // one client fails: checks 2 and 3 judge the other
	case ref.failed() && !g.failed():
		t.Errorf("every client fails (%s) but the gateway releases the stream", ref.Error)
		return
	case ref.failed():
		return
	case g.failed():
		t.Errorf("the gateway refuses a stream every client assembles: %s", g.Error)
		return
	}
	agreed := func(field string) bool { return !slices.Contains(disagree, field) }
	for _, f := range []struct {
		field     string
		got, want *string
	}{
		{"content", g.Content, ref.Content},
		{"refusal", g.Refusal, ref.Refusal},
		{"reasoning", g.Reasoning, ref.Reasoning},
		{"finish_reason", g.FinishReason, ref.FinishReason},
	} {
		if agreed(f.field) && !eqText(f.got, f.want) {
			t.Errorf("%s: gateway %s, clients %s", f.field, show(f.got), show(f.want))
		}
	}
	if !agreed("tool_calls") {
		return
	}
	if len(g.ToolCalls) != len(ref.ToolCalls) {
		t.Errorf("tool calls: gateway %s, clients %s", dumpCalls(g.ToolCalls), dumpCalls(ref.ToolCalls))
		return
	}
	for i, want := range ref.ToolCalls {
		got := g.ToolCalls[i]
		if agreed("tool_calls.id") && got.ID != want.ID {
			t.Errorf("tool_calls[%d].id: gateway %q, clients %q", i, got.ID, want.ID)
		}
		if agreed("tool_calls.name") && got.Name != want.Name {
			t.Errorf("tool_calls[%d].name: gateway %q, clients %q", i, got.Name, want.Name)
		}
		if agreed("tool_calls.arguments") && got.Arguments != want.Arguments {
			t.Errorf("tool_calls[%d].arguments: gateway %q, clients %q", i, got.Arguments, want.Arguments)
		}
	}
}

// checkCoverage: the projected text is every delta's text. Where the
// clients' decoders delivered different text (disagree names
// "streamed.<channel>"), the projection must contain each.
func checkCoverage(t *testing.T, g assembled, clients map[string]assembled, disagree []string) {
	t.Helper()
	if g.failed() {
		return
	}
	for _, ch := range []struct {
		field string
		got   *string
		views func(assembled) *string
	}{
		{"content", g.Content, func(a assembled) *string { return a.Streamed.Content }},
		{"refusal", g.Refusal, func(a assembled) *string { return a.Streamed.Refusal }},
		{"reasoning", g.Reasoning, func(a assembled) *string { return a.Streamed.Reasoning }},
	} {
		var seen []*string
		for _, c := range clients {
			seen = append(seen, ch.views(c))
		}
		if !slices.Contains(disagree, "streamed."+ch.field) {
			if !eqText(ch.got, seen[0]) {
				t.Errorf("%s: gateway projects %s, the clients' deltas carry %s", ch.field, show(ch.got), show(seen[0]))
			}
			continue
		}
		for _, s := range seen {
			if s != nil && (ch.got == nil || !strings.Contains(*ch.got, *s)) {
				t.Errorf("%s: gateway projects %s, which misses delta text a client shows: %s", ch.field, show(ch.got), show(s))
			}
		}
	}
}

// checkRelease: each client assembles from the released bytes exactly the
// tool calls the policy judged, and shows no text the policy did not see
// (it may show less: a decoder can lose events the gateway read). A client
// that fails on them executes nothing.
func checkRelease(t *testing.T, g assembled, again map[string]assembled) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(again)) {
		c := again[name]
		if c.failed() {
			t.Logf("released stream: %s fails (%s), so it surfaces no message", name, c.Error)
			continue
		}
		if !slices.Equal(c.ToolCalls, g.ToolCalls) {
			t.Errorf("released stream: %s assembles tool calls %s, the policy judged %s", name, dumpCalls(c.ToolCalls), dumpCalls(g.ToolCalls))
		}
		for _, f := range []struct {
			field     string
			got, want *string
		}{
			{"content", c.Streamed.Content, g.Content},
			{"refusal", c.Streamed.Refusal, g.Refusal},
			{"reasoning", c.Streamed.Reasoning, g.Reasoning},
		} {
			if f.got != nil && (f.want == nil || !strings.Contains(*f.want, *f.got)) {
				t.Errorf("released stream: %s shows %s %s, the policy judged %s", name, f.field, show(f.got), show(f.want))
			}
		}
	}
}

func dump(a assembled) string {
	b, _ := json.Marshal(a)
	return string(b)
}

func dumpCalls(cs []assembledCall) string {
	b, _ := json.Marshal(cs)
	return string(b)
}
