package messages

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/cputime"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/wiretest"
)

// stream200 is a 200-delta stream: one text block of 150 deltas and two
// tool_use blocks whose input arrives in 25 fragments each.
func stream200() []byte {
	var b strings.Builder
	ev := func(name, data string) { b.WriteString("event: " + name + "\ndata: " + data + "\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_B","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":900,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := range 150 {
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"token `+strconv.Itoa(i)+` "}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	for c := 1; c <= 2; c++ {
		n := strconv.Itoa(c)
		ev("content_block_start", `{"type":"content_block_start","index":`+n+`,"content_block":{"type":"tool_use","id":"toolu_`+n+`","name":"lookup","input":{}}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":`+n+`,"delta":{"type":"input_json_delta","partial_json":"{\"q\":\""}}`)
		for i := range 23 {
			ev("content_block_delta", `{"type":"content_block_delta","index":`+n+`,"delta":{"type":"input_json_delta","partial_json":"part`+strconv.Itoa(i)+` "}}`)
		}
		ev("content_block_delta", `{"type":"content_block_delta","index":`+n+`,"delta":{"type":"input_json_delta","partial_json":"\"}"}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":`+n+`}`)
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":200}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return []byte(b.String())
}

func BenchmarkReadStream200Deltas(b *testing.B) {
	data := stream200()
	s := New(Options{})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		st, err := s.ReadStream(nil, bytes.NewReader(data), 8<<20)
		if err != nil {
			b.Fatal(err)
		}
		if len(st.Response().Project()["tool_calls"].([]any)) != 2 {
			b.Fatal("calls not assembled")
		}
	}
}

// BenchmarkIncremental200Deltas reads stream200 as incremental mediation
// does: Text after every event, a release every tenth event while the
// answer is plain, the tail at the end.
func BenchmarkIncremental200Deltas(b *testing.B) {
	data := stream200()
	s := New(Options{})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		wiretest.ReleaseIncrementally(b, s.OpenStream(nil, bytes.NewReader(data), 8<<20), 10)
	}
	cputime.ReportPerOp(b, cpu0)
}
