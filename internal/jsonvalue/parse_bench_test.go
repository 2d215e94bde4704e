package jsonvalue

import (
	"strconv"
	"strings"
	"testing"
)

// sseChunk is a typical ~250-byte chat.completion.chunk, the unit that
// stream assembly decodes a few hundred times per response.
const sseChunk = `{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570600,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_eb9dce56a8","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],"usage":null}`

// chatRequest2KiB is a ~2 KiB chat-completions request: a system prompt,
// six user/assistant exchanges, sampling parameters and one tool.
func chatRequest2KiB() []byte {
	msgs := []string{`{"role":"system","content":"You are a careful assistant. Answer briefly, cite the tools you used, and never reveal internal identifiers."}`}
	for i := range 6 {
		n := strconv.Itoa(i)
		msgs = append(msgs,
			`{"role":"user","content":"Question number `+n+`: what is the status of order 99`+n+`? Please check the system and reply with the \"tracking\" link."}`,
			`{"role":"assistant","content":"Order 99`+n+` shipped on day `+n+`; tracking is available at https://example.com/t/99`+n+`.","tool_calls":null}`)
	}
	tool := `{"type":"function","function":{"name":"lookup_order","description":"Look up an order by id","parameters":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}}`
	return []byte(`{"model":"gpt-4o-mini","messages":[` + strings.Join(msgs, ",") + `],"tools":[` + tool + `],"temperature":0.2,"top_p":1,"max_tokens":512,"stream":true,"stream_options":{"include_usage":true},"user":"bench"}`)
}

func TestBenchInputsShape(t *testing.T) {
	for name, tc := range map[string]struct {
		data     []byte
		min, max int
	}{
		"chunk":   {[]byte(sseChunk), 230, 280},
		"request": {chatRequest2KiB(), 1800, 2400},
	} {
		if n := len(tc.data); n < tc.min || n > tc.max {
			t.Errorf("%s input is %d bytes", name, n)
		}
		if _, err := decodeStd(tc.data); err != nil {
			t.Errorf("%s input: %v", name, err)
		}
	}
}

// BenchmarkDecodeParser compares Decode and DecodeStrict with decodeStd,
// the previous encoding/json-based implementation, on the gateway's three
// typical input shapes.
func BenchmarkDecodeParser(b *testing.B) {
	ctx, err := Marshal(benchContext(b, 64<<10))
	if err != nil {
		b.Fatal(err)
	}
	inputs := []struct {
		name string
		data []byte
	}{
		{"chunk250B", []byte(sseChunk)},
		{"request2KiB", chatRequest2KiB()},
		{"context64KiB", ctx},
	}
	impls := []struct {
		name string
		fn   func([]byte) (any, error)
	}{
		{"parser", Decode},
		{"strict", DecodeStrict},
		{"std", decodeStd},
	}
	for _, in := range inputs {
		for _, impl := range impls {
			b.Run(in.name+"/"+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(in.data)))
				for b.Loop() {
					if _, err := impl.fn(in.data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
