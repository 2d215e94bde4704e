package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// fastDeltaCases are delta event data at the edge of the fast path's
// shape, at sequence number 4 of fastStream, whose items are a reasoning
// item (rs_1, output 0), a message (msg_1, output 1) and a function call
// (fc_1, output 2), all open: each must be applied, or refused, exactly as
// the tree path does.
var fastDeltaCases = []string{
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"delta":"hi","content_index":0,"output_index":1,"item_id":"msg_1","sequence_number":4,"type":"response.output_text.delta"}`,
	` { "type" : "response.output_text.delta" , "sequence_number" : 4 , "item_id" : "msg_1" , "output_index" : 1 , "content_index" : 0 , "delta" : "hi" } `,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","logprobs":[],"obfuscation":"zz"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"output_index":1,"content_index":0,"delta":"no item id"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"delta":"no content index"}`,
	`{"type":"response.refusal.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"no"}`,
	`{"type":"response.reasoning_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"content_index":0,"delta":"think"}`,
	`{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"think"}`,
	`{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":"think"}`,
	`{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"delta":"think"}`,
	`{"type":"response.function_call_arguments.delta","sequence_number":4,"item_id":"fc_1","output_index":2,"delta":"{\"cmd\":"}`,
	`{"type":"response.code_interpreter_call_code.delta","sequence_number":4,"item_id":"fc_1","output_index":2,"delta":"x"}`,
	`{"type":"response.function_call_arguments.delta","sequence_number":4,"item_id":"fc_1","output_index":2,"content_index":7,"delta":"{\"cmd\":"}`,
	// Members the tree path ignores, or checks.
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","logprobs":[ ],"x":{ },"y":null,"z":true}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","a":false,"b":-1.5e3,"c":"s","d":0}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","a":1,"b":2,"c":3,"d":4,"e":5}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","logprobs":[{"token":"hi","logprob":-0.1}]}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","logprobs":[{"token":"hi","token":"ho"}]}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","x":nul}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","x":tru}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","x":[}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","x":01}`,
	"{\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"msg_1\",\"output_index\":1,\"content_index\":0,\"delta\":\"hi\",\"x\":\"\xff\"}",
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","x":"\ud800"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","obfuscation":"a","obfuscation":"b"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","Delta":"x"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","Obfuscation":"x"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","ſequence_number":"x"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","error":null}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","error":{"message":"x"}}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","annotation_index":0}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","annotation_index":-1}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","partial_image_index":"x"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","summary_index":0}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","summary_index":-1}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi","summary_index":1.5}`,
	// Indices and ids.
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":1,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":00,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":-0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":1e0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":"0","delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":null,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":99999999999,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":3,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":01,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_2","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg\u005f1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":null,"output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":5,"output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"rs_1","output_index":1,"content_index":0,"delta":"hi"}`,
	// Sequence numbers.
	`{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4.0,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":-4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":"4","item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":04,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":99999999999999999999,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","sequence_number":999999999999999999,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	// Deltas.
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":5}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":null}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"a","delta":"b"}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"\ud83d"}`,
	"{\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"msg_1\",\"output_index\":1,\"content_index\":0,\"delta\":\"\xff\"}",
	"{\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"msg_1\",\"output_index\":1,\"content_index\":0,\"delta\":\"a\x01\"}",
	// Types and names.
	`{"type":"response.output_text.delta","type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.d\u0065lta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"typ\u0065":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.mystery.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"response.output_text.done","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"type":"error","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{"sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	// Syntax.
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"} x`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi",}`,
	`{"type":"response.output_text.delta","sequence_number":4,,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"hi"}`,
	`{}`, `[]`, `null`, `"x"`, ``, `{`,
}

// fastStream is a stream with three open items around data (the data of
// an event named name, or of its type when name is empty).
func fastStream(name, data string) string {
	if name == "" {
		name = "response.output_text.delta"
		if strings.Contains(data, `"type":"`) {
			name = typeOf(data)
		}
	}
	return sse(
		`{"type":"response.created","sequence_number":0,"response":`+snap+`}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
		`{"type":"response.output_item.added","sequence_number":2,"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","status":"in_progress","content":[]}}`,
		`{"type":"response.output_item.added","sequence_number":3,"output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"exec_command","arguments":"","status":"in_progress"}}`,
	) + "event: " + name + "\ndata: " + data + "\n\n" + sse(
		`{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":1,"content_index":0,"delta":" after"}`,
		`{"type":"response.output_item.done","sequence_number":6,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"think"}]}}`,
		`{"type":"response.output_item.done","sequence_number":7,"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"hi after","annotations":[]}]}}`,
		`{"type":"response.output_text.delta","sequence_number":8,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"late"}`,
	)
}

// readerState describes what the reader has assembled so far.
func readerState(rd *streamReader) string {
	var b strings.Builder
	a := &rd.a
	fmt.Fprintf(&b, "events %d seq %d hasData %v plain %v text %q parts %v items %v\n", a.events, a.lastSeq, a.hasData, a.plain.plain, a.plain.text.String(), a.plain.parts, a.plain.items)
	fmt.Fprintf(&b, "snapshot %v final output %v\n", a.plain.snapshot, a.finalOutput)
	for _, it := range a.items {
		keys := make([]string, 0, len(it.texts))
		for k, t := range it.texts {
			keys = append(keys, fmt.Sprintf("%c%d=%q", k.list, k.n, t.String()))
		}
		slices.Sort(keys)
		fmt.Fprintf(&b, "item %s %s done %v texts %v\n", it.id, it.typ, it.done != nil, keys)
	}
	return sealed.ReplaceAllString(b.String(), "")
}

// short is data cut for a failure message.
func short(data string) string {
	if len(data) > 600 {
		return data[:300] + " … " + data[len(data)-300:]
	}
	return data
}

// sealed are the ids and times Release mints afresh on each read.
var sealed = regexp.MustCompile(`hgs1_[A-Za-z0-9_-]+|resp_[0-9a-f]{24}|"created_at":[0-9]+`)

// agreeFast reads data with and without the fast path, incrementally
// (watching for plain text) and whole: each event must leave both readers
// in the same state with the same outcome, and both must release the
// same answer.
func agreeFast(t *testing.T, data string) {
	t.Helper()
	s := New(Options{})
	req := mustParse(t, s, plainRequest)
	var fast, tree streamReader
	fast.init(s, req, strings.NewReader(data), 1<<20, true)
	tree.init(s, req, strings.NewReader(data), 1<<20, true)
	tree.a.noFast = true
	for n := 0; ; n++ {
		fdone, ferr := fast.Next()
		tdone, terr := tree.Next()
		if fdone != tdone || fmt.Sprint(ferr) != fmt.Sprint(terr) {
			t.Fatalf("stream %q, event %d: fast path %v %v, tree path %v %v", short(data), n, fdone, ferr, tdone, terr)
		}
		if fs, ts := readerState(&fast), readerState(&tree); fs != ts {
			t.Fatalf("stream %q, event %d: fast path state\n%s\ntree path state\n%s", short(data), n, fs, ts)
		}
		if fdone || ferr != nil {
			if ferr == nil {
				agreeRelease(t, data, fast.st, tree.st)
			}
			break
		}
	}
	whole, werr := s.ReadStream(req, strings.NewReader(data), 1<<20)
	var treeRd streamReader
	treeRd.init(s, req, strings.NewReader(data), 1<<20, false)
	treeRd.a.noFast = true
	var terr error
	for done := false; !done && terr == nil; done, terr = treeRd.Next() {
	}
	if fmt.Sprint(werr) != fmt.Sprint(terr) {
		t.Fatalf("stream %q read whole: fast path %v, tree path %v", short(data), werr, terr)
	}
	if werr == nil {
		agreeRelease(t, data, whole.(*Stream), treeRd.st)
	}
}

// agreeRelease compares two assembled streams: their projection, usage
// and released bytes (fresh ids aside).
func agreeRelease(t *testing.T, data string, fast, tree *Stream) {
	t.Helper()
	if !jsonvalue.Equal(any(fast.Response().Project()), any(tree.Response().Project())) || fmt.Sprint(fast.Response().Usage()) != fmt.Sprint(tree.Response().Usage()) {
		t.Fatalf("stream %q: fast path and tree path assemble differently", short(data))
	}
	fo, ferr := fast.Release(nil)
	to, terr := tree.Release(nil)
	if ferr != nil || terr != nil || !bytes.Equal(sealed.ReplaceAll(fo, nil), sealed.ReplaceAll(to, nil)) {
		t.Fatalf("stream %q: releases differ (errors %v, %v)", short(data), ferr, terr)
	}
}

func TestFastDeltaAgreesWithTree(t *testing.T) {
	for _, c := range fastDeltaCases {
		agreeFast(t, fastStream("", c))
		agreeFast(t, fastStream("response.output_text.delta", c))
		agreeFast(t, fastStream("response.refusal.delta", c))
		agreeFast(t, fastStream("error", c))
		agreeFast(t, strings.Replace(fastStream("", c), "event: ", "event:", -1))
		agreeFast(t, fastStream("", c[:len(c)/2]+"\ndata: "+c[len(c)/2:]))
		agreeFast(t, fastStream("", c)[:len(fastStream("", c))-1]) // no blank line at the end
	}
	agreeFast(t, string(benchStream(200)))
	agreeFast(t, sse(streamEvents("hello", "hello")...))
	agreeFast(t, strings.ReplaceAll(sse(streamEvents("hello", "hello")...), "\n", "\r\n"))
	agreeFast(t, strings.ReplaceAll(sse(streamEvents("hello", "hello")...), "\n", "\r"))
	agreeFast(t, sse(plainEvents([]string{"a", "b\n", `"c"`, "é"}, true)...))
	agreeFast(t, sse(numbered(itemsRaw([][][]string{{{"a", "b"}, {"c"}}, {{"d"}}}, true))...))
	agreeFast(t, "data:\n\n"+sse(plainEvents([]string{"a", "b"}, false)...))
}

// TestFastDeltaTaken: the common deltas do take the fast path (else the
// agreement test would prove nothing).
func TestFastDeltaTaken(t *testing.T) {
	for _, c := range fastDeltaCases[:17] {
		var rd streamReader
		s := New(Options{})
		rd.init(s, mustParse(t, s, plainRequest), strings.NewReader(fastStream("", c)), 1<<20, true)
		for range 4 {
			if _, err := rd.Next(); err != nil {
				t.Fatal(err)
			}
		}
		if ok, err := rd.a.fastDelta([]byte(c), nil); !ok || err != nil {
			t.Fatalf("%s: fast %v, %v", c, ok, err)
		}
	}
}

// TestFastDeltaAllocs: a fast text delta allocates nothing of its own
// once the texts have grown.
func TestFastDeltaAllocs(t *testing.T) {
	var rd streamReader
	s := New(Options{})
	rd.init(s, mustParse(t, s, plainRequest), strings.NewReader(fastStream("", fastDeltaCases[0])), 1<<20, true)
	for range 4 {
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
	}
	rd.a.items[1].text(textKey{'c', 0}).Grow(1 << 16)
	rd.a.plain.plain = false
	ev := []byte(fastDeltaCases[3])
	seq := int64(4)
	if n := testing.AllocsPerRun(100, func() {
		rd.a.lastSeq = seq - 1
		if ok, err := rd.a.fastDelta(ev, []byte("response.output_text.delta")); !ok || err != nil {
			t.Fatalf("fast %v, %v", ok, err)
		}
	}); n != 0 {
		t.Fatalf("a fast delta allocates %v times", n)
	}
}

// FuzzFastDeltaAgreesWithTree: on any event data the fast path decides
// as the tree path does.
func FuzzFastDeltaAgreesWithTree(f *testing.F) {
	for _, c := range fastDeltaCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, c string) {
		if strings.ContainsAny(c, "\r\n") {
			return
		}
		agreeFast(t, fastStream("response.output_text.delta", c))
	})
}

// benchStream is a Responses stream of n output_text deltas as OpenAI
// sends them (logprobs and obfuscation members beside each delta).
func benchStream(n int) []byte {
	deltas := make([]string, n)
	for i := range deltas {
		deltas[i] = "tok" + strconv.Itoa(i) + " "
	}
	return []byte(sse(plainEvents(deltas, false)...))
}

var _ wire.Stream = (*Stream)(nil)

// TestStreamTerminalOutput: the terminal object's output must equal the
// done items; an empty one is assembled from them, as openai-go does, and
// releases what the full one releases.
func TestStreamTerminalOutput(t *testing.T) {
	s := New(Options{})
	req := mustParse(t, s, plainRequest)
	ev := plainEvents([]string{"a", "b"}, true)
	last := ev[len(ev)-1]
	start := strings.Index(last, `"output":[`) + len(`"output":`)
	end := strings.Index(last, `,"usage"`)
	read := func(output string) (*Stream, error) {
		e := append(slices.Clone(ev[:len(ev)-1]), last[:start]+output+last[end:])
		st, err := s.ReadStream(req, strings.NewReader(sse(e...)), 1<<20)
		if err != nil {
			return nil, err
		}
		return st.(*Stream), nil
	}
	full, err := read(last[start:end])
	if err != nil {
		t.Fatal(err)
	}
	empty, err := read(`[]`)
	if err != nil {
		t.Fatal(err)
	}
	agreeRelease(t, "terminal output", full, empty)
	for _, output := range []string{
		strings.Replace(last[start:end], `"ab"`, `"ax"`, 1),
		last[start:strings.Index(last, `,{"id":"fc_1"`)] + `]`,
	} {
		if _, err := read(output); !errors.Is(err, wire.ErrResponseInvalid) {
			t.Errorf("output %s: err %v, want ErrResponseInvalid", output, err)
		}
	}
}

// responseEventCases are response objects at the edge of lightEvent's
// shape, for the snapshot response.in_progress (sequence number 1 of
// responseEventStream) and the terminal response.completed (its last):
// each must be read, or refused, exactly as the tree path reads it.
var responseEventCases = []string{
	`{"id":"resp_1","object":"response","status":"in_progress","output":[],"usage":null}`,
	`{ "output" : [ ] , "id" : "resp_1" }`,
	`{"id":"resp_1","output":[],"text":{"format":{"type":"text"}},"tools":[],"metadata":{"k":"v"}}`,
	`{"id":"resp_1","output":[{"id":"x","type":"message","content":[]}]}`,
	`{"id":"resp_1","output":null}`,
	`{"id":"resp_1"}`,
	`{}`,
	`[]`,
	`null`,
	`"x"`,
	`{"id":"resp_1","output":[],"output":[]}`,
	`{"id":"resp_1","output":[],"Output":[]}`,
	`{"id":"resp_1","outp\u0075t":[]}`,
	`{"id":"resp_1","output":[],"x":{"a":1,"a":2}}`,
	`{"id":"resp_1","output":[],"x":"\ud800"}`,
	`{"id":"resp_1","output":[],"x":"\ud83d\ude00"}`,
	"{\"id\":\"resp_1\",\"output\":[],\"x\":\"\xff\"}",
	`{"id":"resp_1","output":[],"x":"\u00e9"}`,
	`{"id":"resp_1","output":[],"x":01}`,
	`{"id":"resp_1","output":[],}`,
	`{"id":"resp_1","output":[]`,
}

// responseEventTops are top-level members around the response object
// (after type and sequence number): the tree path's checks apply to them.
var responseEventTops = []string{
	``,
	`,"error":null`,
	`,"error":{"message":"x"}`,
	`,"output_index":0`,
	`,"output_index":-1`,
	`,"Response":{}`,
	`,"extra":[1,{"b":true}]`,
	`,"response":{"output":[]}`,
	`,"r\u0065sponse":{"output":[]}`,
}

// responseEventStream is a plain stream whose response.in_progress (when
// final is false) or response.completed carries response and the members
// tops.
func responseEventStream(response, tops string, final bool) string {
	ev := plainEvents([]string{"a", "b"}, true)
	i := 1
	if final {
		i = len(ev) - 1
		if strings.Contains(response, `"id":"x"`) { // the stream's own output
			response = strings.Replace(response, `"output":[{"id":"x","type":"message","content":[]}]`, ev[i][strings.Index(ev[i], `"output":[`):strings.Index(ev[i], `,"usage"`)], 1)
		}
	}
	typ := typeOf(ev[i])
	ev[i] = `{"type":"` + typ + `","sequence_number":` + itoa(i) + `,"response":` + response + tops + `}`
	return sse(ev...)
}

func TestLightEventAgreesWithTree(t *testing.T) {
	for _, r := range responseEventCases {
		for _, top := range responseEventTops {
			for _, final := range []bool{false, true} {
				data := responseEventStream(r, top, final)
				agreeFast(t, data)
				agreeFast(t, eventLine.ReplaceAllString(data, "")) // the type names the event
			}
		}
	}
	// The first snapshot: read whole when the watch keeps it, light when not.
	for _, r := range responseEventCases {
		ev := plainEvents([]string{"a"}, false)
		ev[0] = `{"type":"response.created","sequence_number":0,"response":` + r + `}`
		agreeFast(t, sse(ev...))
	}
}

// TestLightEventTaken: the usual response events do take the light path
// (else the agreement test would prove nothing), the first snapshot
// excepted when the plain-text watch keeps it.
func TestLightEventTaken(t *testing.T) {
	s := New(Options{})
	req := mustParse(t, s, plainRequest)
	for _, watch := range []bool{false, true} {
		var rd streamReader
		rd.init(s, req, strings.NewReader(""), 1<<20, watch)
		for _, e := range plainEvents([]string{"a"}, true) {
			typ := typeOf(e)
			if !responseEvent(typ) {
				continue
			}
			_, ok := rd.a.lightEvent([]byte(e), []byte(typ))
			if want := !watch || typ != "response.created"; ok != want {
				t.Errorf("watch %v, %s: light %v, want %v", watch, typ, ok, want)
			}
			if watch && rd.a.plain.snapshot == nil {
				rd.a.plain.snapshot = map[string]any{} // what reading the first snapshot keeps
			}
		}
	}
}

// FuzzLightEventAgreesWithTree: on any response object the light path
// decides as the tree path does.
func FuzzLightEventAgreesWithTree(f *testing.F) {
	for _, r := range responseEventCases {
		f.Add(r, false)
		f.Add(r, true)
	}
	f.Fuzz(func(t *testing.T, r string, final bool) {
		if strings.ContainsAny(r, "\r\n") {
			return
		}
		agreeFast(t, responseEventStream(r, "", final))
	})
}

// TestDeltaListsMatchDoneEvents: the text each delta event extends (one
// table for the fast and the tree path, which therefore cannot tell a
// wrong entry apart) is the one its done event checks.
func TestDeltaListsMatchDoneEvents(t *testing.T) {
	done := map[string][2]string{ // a delta's done event, and its member holding the text
		"response.output_text.delta":                {"response.output_text.done", "text"},
		"response.refusal.delta":                    {"response.refusal.done", "refusal"},
		"response.reasoning_text.delta":             {"response.reasoning_text.done", "text"},
		"response.reasoning_summary_text.delta":     {"response.reasoning_summary_text.done", "text"},
		"response.function_call_arguments.delta":    {"response.function_call_arguments.done", "arguments"},
		"response.code_interpreter_call_code.delta": {"response.code_interpreter_call_code.done", "code"},
	}
	if len(deltaLists) != len(done) {
		t.Fatalf("%d delta events, %d with a done event here", len(deltaLists), len(done))
	}
	for typ := range deltaLists {
		d, ok := done[typ]
		if !ok {
			t.Fatalf("%s: no done event here", typ)
		}
		a, it := &assembler{}, &streamItem{}
		ev := func(k string) map[string]any {
			return map[string]any{"content_index": json.Number("1"), "summary_index": json.Number("2"), k: "xy"}
		}
		if err := a.fragment(typ, ev("delta"), it); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if err := a.fragment(d[0], ev(d[1]), it); err != nil {
			t.Errorf("%s then %s: %v", typ, d[0], err)
		}
	}
}

// eventLine matches an event line of a stream.
var eventLine = regexp.MustCompile(`(?m)^event: .*\n`)
