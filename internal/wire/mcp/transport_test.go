package mcp

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

func TestCheckStandardHeaders(t *testing.T) {
	call := mustParse(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	uni := mustParse(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"café","arguments":{}}}`)
	read := mustParse(t, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}`)
	list := mustParse(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	for _, tc := range []struct {
		name string
		m    *Message
		h    http.Header
		ok   bool
	}{
		{"none", call, http.Header{}, true},
		{"matching", call, http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}, true},
		{"method only", call, http.Header{"Mcp-Method": {"tools/call"}}, true},
		{"base64 name", uni, http.Header{"Mcp-Name": {"=?base64?Y2Fmw6k=?="}}, true},
		{"uri", read, http.Header{"Mcp-Method": {"resources/read"}, "Mcp-Name": {"file:///a"}}, true},
		{"other method", call, http.Header{"Mcp-Method": {"tools/list"}}, false},
		{"method case", call, http.Header{"Mcp-Method": {"Tools/Call"}}, false},
		{"other name", call, http.Header{"Mcp-Name": {"delete_repo"}}, false},
		{"name on a nameless method", list, http.Header{"Mcp-Name": {"echo"}}, false},
		{"empty name", call, http.Header{"Mcp-Name": {""}}, false},
		{"bad base64", call, http.Header{"Mcp-Name": {"=?base64?***?="}}, false},
		{"base64 of another name", call, http.Header{"Mcp-Name": {"=?base64?ZGVsZXRl?="}}, false},
		// Two values: a middlebox may read either one.
		{"second method differs", call, http.Header{"Mcp-Method": {"tools/call", "tools/list"}}, false},
		{"second name differs", call, http.Header{"Mcp-Name": {"echo", "delete_repo"}}, false},
		{"same method twice", call, http.Header{"Mcp-Method": {"tools/call", "tools/call"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckStandardHeaders(tc.h, tc.m)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckStandardHeaders = %v, want ok %v", err, tc.ok)
			}
			if err != nil {
				if re, ok := err.(*RPCError); !ok || re.Code != CodeHeaderMismatch {
					t.Errorf("error %v, want -32020", err)
				}
			}
		})
	}
}

func TestSetStandardHeaders(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"echo", "echo"},
		{"café", "=?base64?Y2Fmw6k=?="},
		{" padded", "=?base64?IHBhZGRlZA==?="},
		{"a\r\nX-Injected: 1", "=?base64?YQ0KWC1JbmplY3RlZDogMQ==?="},
		{"=?base64?eA==?=", "=?base64?PT9iYXNlNjQ/ZUE9PT89?="},
	} {
		h := http.Header{}
		SetStandardHeaders(h, MethodToolsCall, map[string]any{"name": tc.name})
		if h.Get(HeaderMethod) != MethodToolsCall || h.Get(HeaderName) != tc.want {
			t.Errorf("SetStandardHeaders(%q) = %v, want Mcp-Name %q", tc.name, h, tc.want)
		}
		if d, ok := decodeHeader(h.Get(HeaderName)); !ok || d != tc.name {
			t.Errorf("%q does not round-trip: %q", tc.name, d)
		}
	}
	h := http.Header{}
	SetStandardHeaders(h, MethodToolsList, nil)
	if _, ok := h[HeaderName]; ok {
		t.Error("Mcp-Name set for tools/list")
	}
}

func TestParamHeaders(t *testing.T) {
	args := map[string]any{"region": "eu", "n": map[string]any{"deep": []any{true}}, "city": "Zürich"}
	got, err := ParamHeaders(http.Header{"Mcp-Param-Region": {"eu"}, "Mcp-Param-Flag": {"true"}, "Mcp-Param-City": {"=?base64?WsO8cmljaA==?="}, "Other": {"x"}}, args)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got.Get("Mcp-Param-Region") != "eu" {
		t.Errorf("ParamHeaders = %v", got)
	}
	for _, h := range []http.Header{
		{"Mcp-Param-Region": {canary}},
		{"Mcp-Param-Region": {"eu", canary}},
		{"Mcp-Param-Region": {"=?base64?***?="}},
		{"mcp-param-region": {"us"}},
	} {
		if out, err := ParamHeaders(h, args); err == nil {
			t.Errorf("ParamHeaders(%v) = %v, want a refusal", h, out)
		} else if strings.Contains(err.Error(), "CANARY") {
			t.Errorf("the error quotes the header: %v", err)
		}
	}
}

func readAll(t *testing.T, r *EventReader) ([]*Message, error) {
	t.Helper()
	var out []*Message
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}

func TestEventReader(t *testing.T) {
	const resp = `{"jsonrpc":"2.0","id":1,"result":{}}`
	for _, tc := range []struct {
		name, stream string
		n            int
	}{
		{"one event", "data: " + resp + "\n\n", 1},
		{"crlf", "data: " + resp + "\r\n\r\n", 1},
		{"no space", "data:" + resp + "\n\n", 1},
		{"no final blank line", "data: " + resp + "\n", 1},
		{"no final newline", "data: " + resp, 1},
		{"fields and comments", ": hello\nevent: message\nid: 7\nretry: 10\ndata: " + resp + "\n\n", 1},
		{"data split over lines", "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n", 1},
		{"events without data", "event: ping\n\n: keepalive\n\nid: 3\n\n", 0},
		{"two events", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: " + resp + "\n\n", 2},
		{"empty stream", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.stream), iotest.OneByteReader(strings.NewReader(tc.stream))} {
				ms, err := readAll(t, NewEventReader(r, 1<<20))
				if err != nil || len(ms) != tc.n {
					t.Fatalf("read %d messages, %v; want %d", len(ms), err, tc.n)
				}
			}
		})
	}
	for _, tc := range []struct{ name, stream string }{
		{"not JSON", "data: {" + canary + "\n\n"},
		{"batch", "data: [" + resp + "]\n\n"},
		{"duplicate member", `data: {"jsonrpc":"2.0","id":1,"id":2,"result":{}}` + "\n\n"},
		{"unknown member named by the server", `data: {"jsonrpc":"2.0","id":1,"result":{},"x\"` + canary + `":1}` + "\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(t, NewEventReader(strings.NewReader(tc.stream), 1<<20))
			if err == nil {
				t.Fatal("read the stream, want an error")
			}
			if strings.Contains(err.Error(), "CANARY") {
				t.Errorf("the error quotes the stream: %v", err)
			}
		})
	}
}

// The bound counts each byte of the stream once, whatever its lines'
// lengths.
func TestEventReaderBound(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"t":"` + strings.Repeat("x", 60<<10) + `"}}`
	stream := "data: " + big + "\n\n"
	ms, err := readAll(t, NewEventReader(strings.NewReader(stream), int64(len(stream))))
	if err != nil || len(ms) != 1 {
		t.Fatalf("a %d-byte stream within a bound of its size: %d messages, %v", len(stream), len(ms), err)
	}
	for _, limit := range []int64{int64(len(stream)) - 1, 100, 0} {
		if _, err := readAll(t, NewEventReader(strings.NewReader(stream), limit)); !errors.Is(err, ErrTooLarge) {
			t.Errorf("bound %d: %v, want ErrTooLarge", limit, err)
		}
	}
	// Many small events count too.
	small := strings.Repeat("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n", 1000)
	if _, err := readAll(t, NewEventReader(strings.NewReader(small), int64(len(small))/2)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("many events beyond the bound: %v", err)
	}
	// A line without end beyond the bound fails without reading it all.
	endless := io.MultiReader(strings.NewReader("data: "), infinite{})
	if _, err := NewEventReader(endless, 1<<20).Next(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an endless line: %v", err)
	}
}

type infinite struct{}

func (infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
