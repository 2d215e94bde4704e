package mcp

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Headers of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
)

// StatelessVersion is the first revision whose requests carry the
// standard headers (Mcp-Method, Mcp-Name, Mcp-Param-*).
const StatelessVersion = "2026-07-28"

// NameOf is the value Mcp-Name carries for a request: the tool, prompt or
// resource it names; "" for other methods.
func NameOf(method string, params map[string]any) string {
	var key string
	switch method {
	case MethodToolsCall, "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	default:
		return ""
	}
	s, _ := params[key].(string)
	return s
}

// CheckStandardHeaders refuses a request whose Mcp-Method or Mcp-Name
// header disagrees with its body: a middlebox that routes by the header
// and a server that acts on the body would disagree on what was asked.
func CheckStandardHeaders(h http.Header, m *Message) error {
	// A repeated header is ambiguous: a middlebox may read either value.
	if len(h.Values(HeaderMethod)) > 1 || len(h.Values(HeaderName)) > 1 {
		return Errorf(CodeHeaderMismatch, "the %s and %s headers may appear once each", HeaderMethod, HeaderName)
	}
	if v, ok := headerValue(h, HeaderMethod); ok && v != m.Method {
		return Errorf(CodeHeaderMismatch, "the %s header does not match the body's method", HeaderMethod)
	}
	if v, ok := headerValue(h, HeaderName); ok {
		if d, ok := decodeHeader(v); !ok || d != NameOf(m.Method, m.Params) {
			return Errorf(CodeHeaderMismatch, "the %s header does not match the body's name", HeaderName)
		}
	}
	return nil
}

// SetStandardHeaders sets the standard headers of a request the gateway
// sends for the verdicted method and params (the 2026-07-28 revision
// requires them; earlier ones ignore them).
func SetStandardHeaders(h http.Header, method string, params map[string]any) {
	h.Set(HeaderMethod, method)
	if name := NameOf(method, params); name != "" {
		h.Set(HeaderName, encodeHeader(name))
	}
}

// ParamHeaders returns the client's Mcp-Param-* headers that agree with
// the verdicted arguments args: each must carry the value of one of the
// arguments' primitive members. One that does not is an error: a server
// reading the header would act on a value no verdict covered.
func ParamHeaders(h http.Header, args map[string]any) (http.Header, error) {
	var out http.Header
	for k, vs := range h {
		if !strings.HasPrefix(http.CanonicalHeaderKey(k), HeaderParamPrefix) {
			continue
		}
		for _, v := range vs {
			d, ok := decodeHeader(v)
			if !ok || !hasPrimitive(args, d) {
				return nil, Errorf(CodeHeaderMismatch, "the %s header carries a value the call's arguments do not", http.CanonicalHeaderKey(k))
			}
		}
		if out == nil {
			out = make(http.Header)
		}
		out[http.CanonicalHeaderKey(k)] = vs
	}
	return out, nil
}

// hasPrimitive reports whether some string, number or boolean in v reads
// as s.
func hasPrimitive(v any, s string) bool {
	switch x := v.(type) {
	case string:
		return x == s
	case json.Number:
		return string(x) == s
	case bool:
		return (x && s == "true") || (!x && s == "false")
	case map[string]any:
		for _, e := range x {
			if hasPrimitive(e, s) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasPrimitive(e, s) {
				return true
			}
		}
	}
	return false
}

func headerValue(h http.Header, k string) (string, bool) {
	vs := h.Values(k)
	if len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

// A header value that is not plain ASCII travels as =?base64?…?=.
const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
)

func decodeHeader(v string) (string, bool) {
	if !strings.HasPrefix(v, b64Prefix) || !strings.HasSuffix(v, b64Suffix) {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(v[len(b64Prefix) : len(v)-len(b64Suffix)])
	return string(b), err == nil
}

func encodeHeader(s string) string {
	plain := s == strings.TrimSpace(s)
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if plain && !strings.HasPrefix(s, b64Prefix) {
		return s
	}
	return b64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + b64Suffix
}

// ErrTooLarge reports a server answer beyond the gateway's buffer bound.
var ErrTooLarge = errors.New("the server's answer exceeds the gateway's buffer bound")

// EventReader reads the JSON-RPC messages of a server's text/event-stream
// answer, one event's data at a time, bounded in total.
type EventReader struct {
	r     *bufio.Reader
	left  int64
	data  []byte
	lines int
}

// NewEventReader reads r, at most limit bytes in all.
func NewEventReader(r io.Reader, limit int64) *EventReader {
	return &EventReader{r: bufio.NewReaderSize(r, 16<<10), left: limit}
}

// Next returns the next message of the stream; io.EOF at its end. An
// event whose data is not one JSON-RPC message is an error.
func (e *EventReader) Next() (*Message, error) {
	for {
		line, err := e.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: gather it whole, failing as soon as what was
			// read passes the bound (each byte counted once).
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				if int64(len(buf)) > e.left {
					return nil, ErrTooLarge
				}
				line, err = e.r.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if e.left -= int64(len(line)); e.left < 0 {
			return nil, ErrTooLarge
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		eof := err != nil
		l := bytes.TrimRight(line, "\r\n")
		switch {
		case len(l) == 0 && len(line) > 0 || eof && len(l) == 0:
			if e.lines > 0 {
				data := e.data
				e.data, e.lines = nil, 0
				return e.message(data)
			}
			if eof {
				return nil, io.EOF
			}
		case l[0] == ':':
		default:
			field, value, _ := bytes.Cut(l, []byte{':'})
			value = bytes.TrimPrefix(value, []byte{' '})
			if string(field) == "data" {
				if e.lines > 0 {
					e.data = append(e.data, '\n')
				}
				e.data = append(e.data, value...)
				e.lines++
			}
			if eof {
				if e.lines > 0 {
					data := e.data
					e.data, e.lines = nil, 0
					return e.message(data)
				}
				return nil, io.EOF
			}
		}
	}
}

func (e *EventReader) message(data []byte) (*Message, error) {
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("an event of the server's stream is not one JSON-RPC message: %w", err)
	}
	return m, nil
}
