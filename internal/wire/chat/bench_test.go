package chat

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/cputime"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// stream200 is a 200-chunk stream: 150 content pieces and two tool calls
// whose arguments arrive in 25 fragments each.
func stream200() []byte {
	var b strings.Builder
	head := `data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1741570600,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_b","choices":[{"index":0,"delta":`
	tail := `,"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n"
	for i := range 150 {
		b.WriteString(head + `{"content":"token ` + strconv.Itoa(i) + ` "}` + tail)
	}
	for c := range 2 {
		id := `"call_` + strconv.Itoa(c) + `"`
		b.WriteString(head + `{"tool_calls":[{"index":` + strconv.Itoa(c) + `,"id":` + id + `,"type":"function","function":{"name":"lookup","arguments":"{\"q\":\""}}]}` + tail)
		for i := range 23 {
			b.WriteString(head + `{"tool_calls":[{"index":` + strconv.Itoa(c) + `,"function":{"arguments":"part` + strconv.Itoa(i) + ` "}}]}` + tail)
		}
		b.WriteString(head + `{"tool_calls":[{"index":` + strconv.Itoa(c) + `,"function":{"arguments":"\"}"}}]}` + tail)
	}
	b.WriteString(`data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1741570600,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":200,"total_tokens":1100}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

func BenchmarkReadStream200Chunks(b *testing.B) {
	data := stream200()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		st, err := ReadStream(bytes.NewReader(data), 8<<20, ResponseOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(st.Response().ans.calls) != 2 {
			b.Fatal("calls not assembled")
		}
	}
}

// request2KiB is a ~2 KiB agent request with a dozen messages.
func request2KiB() string {
	var msgs []string
	msgs = append(msgs, `{"role":"system","content":"You are a careful assistant. Answer briefly and cite tools.","x_weight":1.0}`)
	for i := range 6 {
		n := strconv.Itoa(i)
		msgs = append(msgs,
			`{"role":"user","content":"Question number `+n+`: what is the status of order 99`+n+`? Please check the system and reply."}`,
			`{"role":"assistant","content":"Order 99`+n+` shipped on day `+n+`; tracking is available.","x_meta":{"score":1e2}}`)
	}
	return `{"model":"gpt-4o-mini","messages":[` + strings.Join(msgs, ",") + `],"temperature":0.2,"max_tokens":512,"stream":true,"user":"bench"}`
}

func BenchmarkUpstreamBody2KiB(b *testing.B) {
	body := request2KiB()
	r := mustRequest(b, body)
	msgs := jsonvalue.DeepCopy(r.Messages()).([]any) // shared trees are read-only
	msgs[5].(map[string]any)["content"] = "[REDACTED]"
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.UpstreamBody(msgs, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteBackUnchanged(b *testing.B) {
	r := mustResponse(b, toolCallResponse)
	target := r.Project()
	b.SetBytes(int64(len(toolCallResponse)))
	b.ReportAllocs()
	for b.Loop() {
		out, err := r.Release(target)
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkIncremental200Chunks reads the same stream event by event, as
// incremental mediation does, and renders nothing.
func BenchmarkIncremental200Chunks(b *testing.B) {
	data := stream200()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sr := openStream(bytes.NewReader(data), 8<<20, ResponseOptions{}, false)
		for {
			done, err := sr.Next()
			if err != nil {
				b.Fatal(err)
			}
			if done {
				break
			}
		}
		if st, _ := sr.Stream(); len(st.(surfaceStream).Stream.Response().ans.calls) != 2 {
			b.Fatal("calls not assembled")
		}
	}
}

// BenchmarkParseResponse: a text answer with the members an OpenAI body
// carries (usage details, fingerprint, tier).
func BenchmarkParseResponse(b *testing.B) {
	body := []byte(`{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion","created":1741570283,"model":"gpt-4o-2024-08-06",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"The order shipped on Tuesday and should arrive by Friday; the tracking number is in your account.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":1117,"completion_tokens":46,"total_tokens":1163,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
		`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},` +
		`"service_tier":"default","system_fingerprint":"fp_fc9f1d7035"}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := ParseResponse(body, ResponseOptions{})
		if err != nil || r.ID() == "" {
			b.Fatal(err)
		}
		_ = r.Project()
	}
}

// openAIBody is a text answer with the members an OpenAI body carries
// (usage details, fingerprint, tier).
var openAIBody = []byte(`{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion","created":1741570283,"model":"gpt-4o-2024-08-06",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"The order shipped on Tuesday and should arrive by Friday; the tracking number is in your account.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":1117,"completion_tokens":46,"total_tokens":1163,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
	`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},` +
	`"service_tier":"default","system_fingerprint":"fp_fc9f1d7035"}`)

// BenchmarkReleaseJSONAllowed is the allowed JSON path whole: parse,
// project, release the unchanged answer.
func BenchmarkReleaseJSONAllowed(b *testing.B) {
	b.SetBytes(int64(len(openAIBody)))
	b.ReportAllocs()
	start := cputime.Process() // CPU time: steadier than wall time on a loaded machine
	defer cputime.ReportPerOp(b, start)
	for b.Loop() {
		r, err := ParseResponse(openAIBody, ResponseOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if out, err := r.Release(r.Project()); err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkReleaseStream200Chunks is the allowed buffered stream whole:
// read, assemble, replay the upstream chunks.
func BenchmarkReleaseStream200Chunks(b *testing.B) {
	data := stream200()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := cputime.Process()
	defer cputime.ReportPerOp(b, start)
	for b.Loop() {
		st, err := ReadStream(bytes.NewReader(data), 8<<20, ResponseOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if !st.Replayable() {
			b.Fatal("not replayed")
		}
		if out, err := st.Release(nil, true); err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkIncrementalRelease200Chunks reads the stream event by event and
// releases its plain text as it arrives, as incremental mediation does
// under a verdict that allows every segment.
func BenchmarkIncrementalRelease200Chunks(b *testing.B) {
	data := stream200()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := cputime.Process()
	defer cputime.ReportPerOp(b, start)
	for b.Loop() {
		sr := openStream(bytes.NewReader(data), 8<<20, ResponseOptions{}, false)
		released, n := 0, 0
		for {
			done, err := sr.Next()
			if err != nil {
				b.Fatal(err)
			}
			if done {
				break
			}
			text := sr.Text()
			if !sr.Plain() || len(text) == released {
				continue
			}
			if released == 0 {
				head, err := sr.Head()
				if err != nil {
					b.Fatal(err)
				}
				n += len(head)
			}
			out, err := sr.Delta(released, text[released:])
			if err != nil {
				b.Fatal(err)
			}
			n += len(out)
			released = len(text)
		}
		if n == 0 {
			b.Fatal("nothing released")
		}
	}
}
