package messages

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// fastDeltaCases are content_block_delta data at the edge of the fast
// path's shape, for block 0 (text), 1 (thinking) and 2 (tool_use) of
// fastStream: each must be applied, or refused, exactly as the tree path
// does.
var fastDeltaCases = []string{
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
	`{"index":0,"delta":{"text":"hi","type":"text_delta"},"type":"content_block_delta"}`,
	` { "type" : "content_block_delta" , "index" : 0 , "delta" : { "type" : "text_delta" , "text" : "sp" } } `,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ude00x"}}`,
	"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\xff\"}}",
	"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\x01\"}}",
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","extra":1}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","text":"y"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","type":"text_delta"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","thinking":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"","type":"text_delta"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"t\u0065xt_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","t\u0065xt":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"Text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","Text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"x"}}}`,
	`{"type":"content_block_delta","index":0,"delta":null}`, `{"type":"content_block_delta","index":0,"delta":"x"}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hmm"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"sig"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
	`{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0.0,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":1e0,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":00,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":"0","delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":null,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":99999999999,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0}`,
	`{"type":"content_block_delta","index":0,"index":0,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"delta":{"type":"text_delta","text":"y"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"extra":1}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"Index":1}`,
	`{"type":"content_block_delta","Index":0,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_d\u0065lta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_stop","index":0,"delta":{"type":"text_delta","text":"x"}}`,
	`{"typ\u0065":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} x`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x",}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},}`,
	`{"type":"content_block_delta","index":0,}`, `{}`, `[]`, `null`, ``,
}

// fastStream is a stream with an open text, thinking and tool_use block
// around delta (data of a content_block_delta event, or any event data
// when name is given).
func fastStream(name, data string) string {
	return sse(
		"message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}`,
		name, data,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" after"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`,
		"content_block_stop", `{"type":"content_block_stop","index":2}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":4}}`,
		"message_stop", `{"type":"message_stop"}`,
	)
}

// agreeFast reads data with and without the fast path: the outcome
// (error, projection, replayability, released bytes) must be the same.
func agreeFast(t *testing.T, data []byte) {
	t.Helper()
	s := New(Options{AllowServerTools: true})
	fast, ferr := s.readStreamMode(bytes.NewReader(data), 1<<20, answerFor(nil), false)
	tree, terr := s.readStreamMode(bytes.NewReader(data), 1<<20, answerFor(nil), true)
	if (ferr == nil) != (terr == nil) || ferr != nil && ferr.Error() != terr.Error() {
		t.Fatalf("stream %q: fast path error %v, tree path error %v", data, ferr, terr)
	}
	if ferr != nil {
		return
	}
	if !jsonvalue.Equal(any(fast.Response().Project()), any(tree.Response().Project())) || fast.replayable != tree.replayable {
		t.Fatalf("stream %q: fast path and tree path assemble differently", data)
	}
	fo, ferr := fast.Release(nil)
	to, terr := tree.Release(nil)
	if ferr != nil || terr != nil || !bytes.Equal(normalized(t, fast, fo), normalized(t, tree, to)) {
		t.Fatalf("stream %q: releases differ (errors %v, %v)", data, ferr, terr)
	}
}

func TestFastDeltaAgreesWithTree(t *testing.T) {
	for _, c := range fastDeltaCases {
		agreeFast(t, []byte(fastStream("content_block_delta", c)))
		agreeFast(t, []byte(fastStream("content_block_delta", c)+"event: content_block_delta\ndata: "+c+"\n\n"))
		agreeFast(t, []byte(fastStream("content_block_delta", c[:len(c)/2]+"\ndata: "+c[len(c)/2:])))
		agreeFast(t, []byte(fastStream("content_block_stop", c)))
		agreeFast(t, []byte("event: content_block_delta\ndata: "+c+"\n\n"+fastStream("ping", `{"type":"ping"}`)))
	}
	agreeFast(t, stream200())
	agreeFast(t, []byte(sse(streamEvents...)))
	agreeFast(t, []byte(strings.ReplaceAll(sse(streamEvents...), "\n", "\r\n")))
}

// TestFastDeltaTaken: the common deltas do take the fast path (else the
// agreement test would prove nothing).
func TestFastDeltaTaken(t *testing.T) {
	a := &assembler{s: New(Options{}), replayable: true, msg: map[string]any{}}
	a.blocks = []*sblock{{obj: map[string]any{"type": "text"}, open: true}}
	for _, c := range fastDeltaCases[:4] {
		if ok, err := a.fastDelta(sseEvent{name: "content_block_delta", data: []byte(c)}); !ok || err != nil {
			t.Fatalf("%s: fast %v, %v", c, ok, err)
		}
	}
	if got := a.blocks[0].text.String(); !strings.HasPrefix(got, "hihisp") {
		t.Fatalf("text %q", got)
	}
}

// FuzzFastDeltaAgreesWithTree: on any delta data the fast path decides
// as the tree path does.
func FuzzFastDeltaAgreesWithTree(f *testing.F) {
	for _, c := range fastDeltaCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, c string) {
		if strings.ContainsAny(c, "\r\n") {
			return
		}
		agreeFast(t, []byte(fastStream("content_block_delta", c)))
	})
}

// TestFastDeltaAllocs: a fast text delta on an open block allocates
// nothing of its own (the event list grows amortized, so it is sized first).
func TestFastDeltaAllocs(t *testing.T) {
	a := &assembler{s: New(Options{}), replayable: true, msg: map[string]any{}}
	a.blocks = []*sblock{{obj: map[string]any{"type": "text"}, open: true}}
	a.blocks[0].text.Grow(1 << 16)
	a.events = make([]eventRec, 0, 1<<12)
	data := []byte(fastDeltaCases[0])
	ev := sseEvent{name: "content_block_delta", data: data, at: dataAt{buf: 1, end: int32(len(data))}} // as read into a buffer
	if n := testing.AllocsPerRun(100, func() {
		if ok, err := a.fastDelta(ev); !ok || err != nil {
			t.Fatalf("fast %v, %v", ok, err)
		}
	}); n != 0 {
		t.Fatalf("a fast delta allocates %v times", n)
	}
}
