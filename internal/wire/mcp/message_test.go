package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// canary stands for a secret a hostile peer plants in what it sends: no
// error the package makes may carry it.
const canary = "sk-proj-CANARYq9Zt7Lm2Xv8Pw4Rk"

func TestParseRefusesWhatIsNotOneMessage(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		code       int64
	}{
		{"not JSON", `{"jsonrpc":"2.0",` + canary, CodeParseError},
		{"duplicate member", `{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping"}`, CodeParseError},
		{"duplicate nested", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"` + canary + `"}}`, CodeParseError},
		{"lone surrogate", `{"jsonrpc":"2.0","id":1,"method":"x\ud800"}`, CodeParseError},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest},
		{"empty batch", `[]`, CodeInvalidRequest},
		{"string", `"` + canary + `"`, CodeInvalidRequest},
		{"null", `null`, CodeInvalidRequest},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, CodeInvalidRequest},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest},
		{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"ping","` + canary + `":1}`, CodeInvalidRequest},
		{"case variant member", `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/call"}`, CodeInvalidRequest},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest},
		{"id float", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest},
		{"id exponent", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, CodeInvalidRequest},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest},
		{"id beyond int64", `{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}`, CodeInvalidRequest},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, CodeInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":7}`, CodeInvalidRequest},
		{"params array", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, CodeInvalidParams},
		{"params null", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, CodeInvalidParams},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, CodeInvalidRequest},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, CodeInvalidRequest},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest},
		{"response with params", `{"jsonrpc":"2.0","id":1,"result":{},"params":{}}`, CodeInvalidRequest},
		{"result array", `{"jsonrpc":"2.0","id":1,"result":["` + canary + `"]}`, CodeInvalidRequest},
		{"result string", `{"jsonrpc":"2.0","id":1,"result":"` + canary + `"}`, CodeInvalidRequest},
		{"error not object", `{"jsonrpc":"2.0","id":1,"error":"` + canary + `"}`, CodeInvalidRequest},
		{"error code float", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, CodeInvalidRequest},
		{"error code string", `{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}`, CodeInvalidRequest},
		{"error without message", `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, CodeInvalidRequest},
		{"neither", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse([]byte(tc.body))
			var re *RPCError
			if !errors.As(err, &re) {
				t.Fatalf("Parse = %+v, %v; want an *RPCError", m, err)
			}
			if re.Code != tc.code {
				t.Errorf("code %d (%s), want %d", re.Code, re.Message, tc.code)
			}
			if strings.Contains(re.Message, canary) || strings.Contains(re.Message, "CANARY") {
				t.Errorf("the error quotes the message: %s", re.Message)
			}
		})
	}
}

func TestParseKinds(t *testing.T) {
	for _, tc := range []struct {
		body string
		kind Kind
		id   any
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, Request, json.Number("1")},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}`, Request, "a"},
		{`{"jsonrpc":"2.0","id":-3,"method":"tools/list"}`, Request, json.Number("-3")},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, Notification, nil},
		{`{"jsonrpc":"2.0","id":2,"result":{}}`, Response, json.Number("2")},
		{`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"m","data":{"x":1}}}`, Response, json.Number("2")},
	} {
		m, err := Parse([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if m.Kind != tc.kind || m.ID != tc.id {
			t.Errorf("%s: kind %d id %#v, want %d %#v", tc.body, m.Kind, m.ID, tc.kind, tc.id)
		}
	}
}

func TestSameID(t *testing.T) {
	for _, tc := range []struct {
		a, b any
		same bool
	}{
		{json.Number("1"), json.Number("1"), true},
		{json.Number("1"), "1", false},
		{"1", json.Number("1"), false},
		{"a", "a", true},
		{"a", "A", false},
		{json.Number("-0"), json.Number("0"), true},
		{json.Number("1"), json.Number("2"), false},
		{nil, nil, false},
		{json.Number("1.0"), json.Number("1"), false},
	} {
		if got := SameID(tc.a, tc.b); got != tc.same {
			t.Errorf("SameID(%#v, %#v) = %v", tc.a, tc.b, got)
		}
	}
}

func TestErrorBodyDropsDataThatCannotBeWritten(t *testing.T) {
	b := ErrorBody(json.Number("3"), &RPCError{Code: -1, Message: "m", Data: func() {}})
	if string(b) != `{"error":{"code":-1,"message":"m"},"id":3,"jsonrpc":"2.0"}` {
		t.Errorf("ErrorBody = %s", b)
	}
	if b := ErrorBody(nil, Errorf(CodeParseError, "bad")); string(b) != `{"error":{"code":-32700,"message":"bad"},"id":null,"jsonrpc":"2.0"}` {
		t.Errorf("ErrorBody(nil) = %s", b)
	}
}

func TestRelayedCode(t *testing.T) {
	for _, tc := range []struct{ in, want int64 }{
		{-32602, -32602}, {-32768, -32768}, {-32000, -32000}, {-32002, -32002},
		{-31999, CodeInternalError}, {-32769, CodeInternalError}, {0, CodeInternalError},
		{1 << 52, CodeInternalError}, {-(1 << 62), CodeInternalError},
	} {
		if got := RelayedCode(tc.in); got != tc.want {
			t.Errorf("RelayedCode(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestVersionData(t *testing.T) {
	good := map[string]any{"supported": []any{"2025-11-25", "2025-06-18"}, "requested": "2026-07-28", "note": "sk-proj-x"}
	d := VersionData(CodeUnsupportedProtocolVersion, good)
	if len(d) != 2 || len(d["supported"].([]any)) != 2 || d["requested"] != "2026-07-28" {
		t.Errorf("VersionData = %v, want the revisions alone", d)
	}
	if d := VersionData(CodeUnsupportedProtocolVersion, map[string]any{"supported": manyRevisions(maxRevisions)}); len(d["supported"].([]any)) != maxRevisions {
		t.Errorf("VersionData dropped a list of %d revisions: %v", maxRevisions, d)
	}
	for _, tc := range []struct {
		code int64
		data any
	}{
		{CodeInvalidParams, good},
		{CodeUnsupportedProtocolVersion, "2025-11-25"},
		{CodeUnsupportedProtocolVersion, map[string]any{"supported": []any{"2025-11-25", "sk-proj-x"}}},
		{CodeUnsupportedProtocolVersion, map[string]any{"supported": []any{json.Number("1")}}},
		// Digits shaped as dates but no dates: a channel for anything.
		{CodeUnsupportedProtocolVersion, map[string]any{"supported": []any{"2025-11-25", "9999-99-99"}}},
		// More revisions than any server supports.
		{CodeUnsupportedProtocolVersion, map[string]any{"supported": manyRevisions(maxRevisions + 1)}},
	} {
		if d := VersionData(tc.code, tc.data); d != nil {
			t.Errorf("VersionData(%d, %v) = %v, want nil", tc.code, tc.data, d)
		}
	}
}

// manyRevisions is n distinct real revisions.
func manyRevisions(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = time.Date(2024, 1, 1+i, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	}
	return out
}

func TestIsSessionID(t *testing.T) {
	for s, want := range map[string]bool{
		"a": true, "!~": true, strings.Repeat("x", 256): true,
		"": false, strings.Repeat("x", 257): false, "a b": false, "a\x7f": false, "a\tb": false, "é": false,
	} {
		if got := IsSessionID(s); got != want {
			t.Errorf("IsSessionID(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestIsRevision: a revision is a real calendar date; digits merely
// shaped as one are not passed on as one (headers, error data).
func TestIsRevision(t *testing.T) {
	for s, want := range map[string]bool{
		"2025-11-25": true, "2026-07-28": true, "2024-02-29": true,
		"2025-99-99": false, "9999-99-99": false, "2025-02-30": false, "2023-02-29": false,
		"2025/11/25": false, "25-11-2025": false, "2025-11-5": false, "2025-11-250": false, "": false,
	} {
		if got := IsRevision(s); got != want {
			t.Errorf("IsRevision(%q) = %v, want %v", s, got, want)
		}
	}
}
