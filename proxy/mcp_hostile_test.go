package proxy_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// mcpCanary is planted in every member a hostile peer can fill: it may
// reach the client, the records or the logs only where a verdict covered
// it.
const mcpCanary = "sk-proj-CANARYq9Zt7Lm2Xv8Pw4Rk"

// hostileReq is one request that reached the hostile MCP server.
type hostileReq struct {
	method string
	header http.Header
	body   string
	msg    rpcMsg
}

// rpcMsg is a JSON-RPC message as the hostile server reads it.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// hostileMCP is an MCP server written by hand: reply answers each request
// (a message with a method and an id); the gateway's answers to the
// server's own requests, notifications and DELETEs get 202.
type hostileMCP struct {
	url   string
	mu    sync.Mutex
	got   []hostileReq
	reply func(w http.ResponseWriter, m rpcMsg)
}

func newHostileMCP(t *testing.T) *hostileMCP {
	t.Helper()
	h := &hostileMCP{reply: func(w http.ResponseWriter, m rpcMsg) {
		writeJSONRPC(w, m.ID, `{"content":[{"type":"text","text":"ok"}]}`)
	}}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m rpcMsg
		json.Unmarshal(b, &m)
		h.mu.Lock()
		h.got = append(h.got, hostileReq{method: r.Method, header: r.Header.Clone(), body: string(b), msg: m})
		reply := h.reply
		h.mu.Unlock()
		if r.Method != http.MethodPost || m.Method == "" || m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		reply(w, m)
	}))
	t.Cleanup(hs.Close)
	h.url = hs.URL
	return h
}

func (h *hostileMCP) answer(reply func(w http.ResponseWriter, m rpcMsg)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reply, h.got = reply, nil
}

func (h *hostileMCP) received() []hostileReq {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hostileReq(nil), h.got...)
}

func writeJSONRPC(w http.ResponseWriter, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// writeSSE answers with an event stream of the given messages.
func writeSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
	}
}

// mcpRig is a gateway serving hostile MCP servers, its records and logs
// captured.
type mcpRig struct {
	url     string
	records *syncBuffer
	logs    *syncBuffer
}

// startMCPRig serves a gateway whose mcp block is mcpBlock (indented
// entries under "mcp:"), with extra top-level configuration and policy's
// interceptor entries.
func startMCPRig(t *testing.T, mcpBlock, extra, policy string) *mcpRig {
	t.Helper()
	rig := &mcpRig{records: &syncBuffer{}, logs: &syncBuffer{}}
	if policy == "" {
		policy = "  - {name: pass, type: allow}\n"
	}
	doc := "listeners:\n  http: \"127.0.0.1:0\"\nupstreams:\n  - name: mock\n    type: mock\nmcp:\n" + mcpBlock +
		"records:\n  sinks:\n    - type: stdout\n" + extra + "interceptors:\n" + policy
	if !strings.Contains(extra, "sessions:") {
		doc += "sessions:\n  store: memory\n"
	}
	rig.url = serveDoc(t, "mcp-hostile.yaml", doc, rig.records, rig.logs)
	return rig
}

// oneServer is an mcp block serving url as "fs".
func oneServer(url, more string) string {
	return "  servers:\n    - name: fs\n      url: " + url + "\n" + more
}

// post sends one MCP POST to path and returns what the client receives.
func (rig *mcpRig) post(t *testing.T, path, body string, h http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, rig.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// noCanary fails when the canary is in what the client received, the
// records or the logs.
func (rig *mcpRig) noCanary(t *testing.T, client ...string) {
	t.Helper()
	for i, c := range client {
		if strings.Contains(c, "CANARY") {
			t.Errorf("the client received the canary (%d): %s", i, c)
		}
	}
	if strings.Contains(rig.records.String(), "CANARY") {
		t.Errorf("a record carries the canary:\n%s", rig.records.String())
	}
	if strings.Contains(rig.logs.String(), "CANARY") {
		t.Errorf("a log line carries the canary:\n%s", rig.logs.String())
	}
}

// rpcAnswer decodes the JSON-RPC answer the client received.
func rpcAnswer(t *testing.T, body string) (result map[string]any, code int, message string) {
	t.Helper()
	var m struct {
		Result map[string]any `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("the client's answer is not JSON: %v\n%s", err, body)
	}
	if m.Error != nil {
		return nil, m.Error.Code, m.Error.Message
	}
	return m.Result, 0, ""
}

// pointsOf lists the records' interception points by session, in order.
func pointsOf(recs []map[string]any) map[string][]string {
	out := map[string][]string{}
	for _, r := range recs {
		id := fmt.Sprint(r["session_id"])
		out[id] = append(out[id], fmt.Sprint(r["interception_point"]))
	}
	return out
}

const toolsCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`

// A server that asks the client something (sampling, elicitation, roots)
// before it answers: the client never sees the request, the gateway
// answers the server with an error, and the call completes. Progress and
// log notifications on the way never reach the client.
func TestMCPHostileServerRequestsAndNotifications(t *testing.T) {
	up := newHostileMCP(t)
	rig := startMCPRig(t, oneServer(up.url, ""), "", "")
	for _, method := range []string{"sampling/createMessage", "elicitation/create", "roots/list", "ping"} {
		t.Run(method, func(t *testing.T) {
			up.answer(func(w http.ResponseWriter, m rpcMsg) {
				writeSSE(w,
					`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"`+mcpCanary+`","progress":1,"message":"`+mcpCanary+`"}}`,
					`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"`+mcpCanary+`","data":"`+mcpCanary+`"}}`,
					`{"jsonrpc":"2.0","id":"srv-`+mcpCanary+`","method":"`+method+`","params":{"messages":[{"role":"user","content":{"type":"text","text":"`+mcpCanary+`"}}],"message":"`+mcpCanary+`","maxTokens":5}}`,
					`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"done"}]}}`,
				)
			})
			status, _, body := rig.post(t, "/mcp/fs", toolsCall, nil)
			result, code, _ := rpcAnswer(t, body)
			if status != 200 || code != 0 || fmt.Sprint(result["content"]) != "[map[text:done type:text]]" {
				t.Fatalf("client got %d %s", status, body)
			}
			got := up.received()
			if len(got) != 2 || got[0].msg.Method != "tools/call" {
				t.Fatalf("server received %d requests: %+v", len(got), got)
			}
			answer := got[1].msg
			if string(answer.ID) != `"srv-`+mcpCanary+`"` || answer.Error == nil || answer.Error.Code != -32601 || answer.Method != "" {
				t.Errorf("the gateway answered the server's %s with %s, want a -32601 error to its id", method, got[1].body)
			}
			if strings.Contains(got[1].body, "sampling") || got[1].header.Get("Mcp-Method") != "" {
				t.Errorf("the gateway's answer carries more than the error: %s %v", got[1].body, got[1].header)
			}
			rig.noCanary(t, body)
		})
	}
	recs := mcpRecords(t, rig.records.String())
	for id, points := range pointsOf(recs) {
		if strings.Join(points, " ") != "agent_startup pre_tool_call post_tool_call agent_shutdown" {
			t.Errorf("session %s: %v", id, points)
		}
	}
}

// A server that keeps asking is cut off: the gateway answers a bounded
// number of its requests, then fails the call closed.
func TestMCPHostileServerRequestFlood(t *testing.T) {
	up := newHostileMCP(t)
	rig := startMCPRig(t, oneServer(up.url, ""), "", "")
	up.answer(func(w http.ResponseWriter, m rpcMsg) {
		var events []string
		for i := range 200 {
			events = append(events, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"roots/list"}`, 1000+i))
		}
		writeSSE(w, append(events, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[]}}`)...)
	})
	status, _, body := rig.post(t, "/mcp/fs", toolsCall, nil)
	_, code, _ := rpcAnswer(t, body)
	if status != 200 || code != -32002 {
		t.Errorf("client got %d %s, want a -32002 error", status, body)
	}
	if n := len(up.received()); n > 1+16 {
		t.Errorf("the gateway answered %d server requests of one call", n-1)
	}
}

// Every malformed or misdirected answer fails the call closed with a
// -32002 error that quotes nothing of it; a well-formed answer's members
// outside the projection never reach the client.
func TestMCPHostileServerAnswers(t *testing.T) {
	up := newHostileMCP(t)
	rig := startMCPRig(t, oneServer(up.url, "      timeout: 700ms\n"), "streaming:\n  buffer_limit: 64KiB\n",
		"  - {name: redact, type: redact, points: [post_tool_call]}\n")
	big := strings.Repeat(mcpCanary, (80<<10)/len(mcpCanary))
	text := func(id json.RawMessage, extra string) string {
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"` + mcpCanary + `"}]` + extra + `}}`
	}
	for _, tc := range []struct {
		name   string
		reply  func(w http.ResponseWriter, m rpcMsg)
		status int
		code   int
		msg    string // a part of the error message the client gets
		posts  int    // post_tool_call records expected
		want   string // the content the client gets, when no error
	}{
		{name: "stream ends without the response", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeSSE(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`+mcpCanary+`"}}`)
		}, status: 200, code: -32002, msg: "ended without the answer"},
		{name: "stream answers another id", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeSSE(w, text(json.RawMessage(`999`), ""))
		}, status: 200, code: -32002},
		{name: "stream answers the id as a string", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeSSE(w, text(json.RawMessage(`"1"`), ""))
		}, status: 200, code: -32002},
		{name: "JSON answers another id", reply: func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, text(json.RawMessage(`2`), ""))
		}, status: 200, code: -32002},
		{name: "JSON answer beyond the buffer", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeJSONRPC(w, m.ID, `{"content":[{"type":"text","text":"`+big+`"}]}`)
		}, status: 200, code: -32002, msg: "exceeds"},
		{name: "stream beyond the buffer", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeSSE(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"`+big+`"}]}}`)
		}, status: 200, code: -32002, msg: "exceeds"},
		{name: "notifications beyond the buffer", reply: func(w http.ResponseWriter, m rpcMsg) {
			var events []string
			for range 200 {
				events = append(events, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"`+strings.Repeat(mcpCanary, 20)+`"}}`)
			}
			writeSSE(w, append(events, text(m.ID, ""))...)
		}, status: 200, code: -32002, msg: "exceeds"},
		{name: "invalid JSON", reply: func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":"`+mcpCanary)
		}, status: 200, code: -32002},
		{name: "duplicate members", reply: func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]},"result":{"content":[{"type":"text","text":"`+mcpCanary+`"}]}}`)
		}, status: 200, code: -32002},
		{name: "member named by the server", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeSSE(w, `{"jsonrpc":"2.0","id":1,"result":{},"x\"`+mcpCanary+`":1}`)
		}, status: 200, code: -32002},
		{name: "batch", reply: func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `[`+text(m.ID, "")+`]`)
		}, status: 200, code: -32002},
		{name: "content not an array", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeJSONRPC(w, m.ID, `{"content":{"type":"text","text":"`+mcpCanary+`"}}`)
		}, status: 200, code: -32002, msg: "invalid result"},
		{name: "structuredContent not an object", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeJSONRPC(w, m.ID, `{"content":[],"structuredContent":["`+mcpCanary+`"]}`)
		}, status: 200, code: -32002, msg: "invalid result"},
		{name: "isError not a bool", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeJSONRPC(w, m.ID, `{"content":[{"type":"text","text":"`+mcpCanary+`"}],"isError":"`+mcpCanary+`"}`)
		}, status: 200, code: -32002, msg: "invalid result"},
		{name: "members outside the projection", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeJSONRPC(w, m.ID, `{"content":[{"type":"text","text":"`+mcpCanary+`"}],"structuredContent":{"ok":true},"_meta":{"k":"`+mcpCanary+`"},"x-`+mcpCanary+`":"`+mcpCanary+`"}`)
		}, status: 200, posts: 1, want: `[map[text:{"ok":true} type:text]]`},
		{name: "error answer with an email and data", reply: func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32000,"message":"no mailbox for ops@example.com","data":{"trace":"`+mcpCanary+`"}}}`)
		}, status: 200, code: -32000, msg: "no mailbox for [email]", posts: 1},
		{name: "HTTP 500", reply: func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("X-Debug", mcpCanary)
			http.Error(w, "stack trace "+mcpCanary, http.StatusInternalServerError)
		}, status: 200, code: -32002, msg: "HTTP 500"},
		{name: "HTTP 404: the client re-initializes", reply: func(w http.ResponseWriter, m rpcMsg) {
			http.Error(w, "no session "+mcpCanary, http.StatusNotFound)
		}, status: 404, code: -32002},
		{name: "redirect not followed", reply: func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Location", "http://127.0.0.1:1/"+mcpCanary)
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, status: 200, code: -32002, msg: "HTTP 307"},
		{name: "202 without an answer", reply: func(w http.ResponseWriter, m rpcMsg) {
			w.WriteHeader(http.StatusAccepted)
		}, status: 200, code: -32002},
		{name: "session id not visible ASCII", reply: func(w http.ResponseWriter, m rpcMsg) {
			w.Header().Set("Mcp-Session-Id", mcpCanary+" é")
			writeJSONRPC(w, m.ID, `{"content":[{"type":"text","text":"ok"}]}`)
		}, status: 200, code: -32002},
		{name: "slower than the server's timeout", reply: func(w http.ResponseWriter, m rpcMsg) {
			time.Sleep(1500 * time.Millisecond)
			writeJSONRPC(w, m.ID, `{"content":[{"type":"text","text":"late"}]}`)
		}, status: 200, code: -32002, msg: "timed out"},
		{name: "stream stalls past the timeout", reply: func(w http.ResponseWriter, m rpcMsg) {
			writeSSE(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)
			w.(http.Flusher).Flush()
			time.Sleep(1500 * time.Millisecond)
			writeSSE(w, text(m.ID, ""))
		}, status: 200, code: -32002},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.answer(tc.reply)
			before := len(mcpRecords(t, rig.records.String()))
			start := time.Now()
			status, h, body := rig.post(t, "/mcp/fs", toolsCall, nil)
			if time.Since(start) > 1400*time.Millisecond {
				t.Errorf("the gateway answered after %v: the server's timeout is 700ms", time.Since(start))
			}
			result, code, msg := rpcAnswer(t, body)
			if status != tc.status || code != tc.code || !strings.Contains(msg, tc.msg) {
				t.Errorf("client got %d %s, want %d code %d with %q", status, body, tc.status, tc.code, tc.msg)
			}
			if tc.want != "" {
				if b, _ := json.Marshal(result["content"]); fmt.Sprint(result["content"]) != tc.want {
					t.Errorf("client got content %s, want %s", b, tc.want)
				}
			}
			if h.Get("Mcp-Session-Id") != "" {
				t.Errorf("the client got the server's session id %q", h.Get("Mcp-Session-Id"))
			}
			if n := len(up.received()); n != 1 {
				t.Errorf("the server received %d requests, want the one call", n)
			}
			recs := mcpRecords(t, rig.records.String())[before:]
			posts := 0
			for _, r := range recs {
				if r["interception_point"] == "post_tool_call" {
					posts++
				}
			}
			if posts != tc.posts {
				t.Errorf("%d post_tool_call records, want %d", posts, tc.posts)
			}
			rig.noCanary(t, body, fmt.Sprint(h))
		})
	}
}

// What a client sends that the gateway cannot mediate is refused before
// it reaches the server; what it answers itself never reaches it.
func TestMCPHostileClient(t *testing.T) {
	up := newHostileMCP(t)
	rig := startMCPRig(t, oneServer(up.url, "")+"  allow_methods: [custom/echo]\n", "", "")
	call := func(extra string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","region":"eu"}` + extra + `}}`
	}
	for _, tc := range []struct {
		name    string
		body    string
		h       http.Header
		status  int
		code    int  // the JSON-RPC error code, 0 for a result, -1 for no JSON body
		reaches bool // whether the server receives it
	}{
		{"Mcp-Method disagrees", call(""), http.Header{"Mcp-Method": {"tools/list"}}, 400, -32020, false},
		{"Mcp-Name disagrees", call(""), http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"delete_repo"}}, 400, -32020, false},
		{"Mcp-Name twice", call(""), http.Header{"Mcp-Name": {"echo", "delete_repo"}}, 400, -32020, false},
		{"Mcp-Name on a notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Name": {"echo"}}, 400, -32020, false},
		{"Mcp-Param value not in the arguments", call(""), http.Header{"Mcp-Param-Region": {mcpCanary}}, 400, -32020, false},
		{"Mcp-Param value in the arguments", call(""), http.Header{"Mcp-Param-Region": {"eu"}}, 200, 0, true},
		{"headers that agree", call(""), http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}, 200, 0, true},
		{"batch", `[` + call("") + `]`, nil, 400, -32600, false},
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":"` + mcpCanary, nil, 400, -32700, false},
		{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"ping","` + mcpCanary + `":1}`, nil, 400, -32600, false},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"` + mcpCanary + `/x"}`, nil, 200, -32601, false},
		{"sampling sent by a client", `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}`, nil, 200, -32601, false},
		{"allowed method", `{"jsonrpc":"2.0","id":1,"method":"custom/echo","params":{"q":"x"}}`, nil, 200, 0, true},
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/` + mcpCanary + `"}`, nil, 400, -32601, false},
		{"dropped notification", `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, nil, 202, -1, false},
		{"client response", `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[{"uri":"file:///` + mcpCanary + `"}]}}`, nil, 400, -32600, false},
		{"client error response", `{"jsonrpc":"2.0","id":"srv-1","error":{"code":1,"message":"` + mcpCanary + `"}}`, nil, 400, -32600, false},
		{"slash in the tool name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x/tools/list"}}`, nil, 200, -32602, false},
		{"case variant of name", call(`,"NAME":"delete_repo"`), nil, 200, -32602, false},
		{"arguments not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":["` + mcpCanary + `"]}}`, nil, 200, -32602, false},
		{"ping", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, nil, 200, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.answer(func(w http.ResponseWriter, m rpcMsg) {
				writeJSONRPC(w, m.ID, `{"content":[{"type":"text","text":"ok"}],"echo":"yes"}`)
			})
			status, _, body := rig.post(t, "/mcp/fs", tc.body, tc.h)
			if status != tc.status {
				t.Errorf("client got %d %s, want %d", status, body, tc.status)
			}
			if tc.code >= 0 {
				if _, code, _ := rpcAnswer(t, body); code != tc.code {
					t.Errorf("client got %s, want code %d", body, tc.code)
				}
			}
			got := up.received()
			if tc.reaches != (len(got) > 0) {
				t.Errorf("the server received %d requests, want reached=%v", len(got), tc.reaches)
			}
			for _, r := range got {
				if strings.Contains(r.body, "CANARY") || strings.Contains(fmt.Sprint(r.header), "CANARY") {
					t.Errorf("the server received the canary: %s %v", r.body, r.header)
				}
			}
			if tc.name == "Mcp-Param value in the arguments" && (len(got) != 1 || got[0].header.Get("Mcp-Param-Region") != "eu") {
				t.Errorf("the agreeing Mcp-Param header did not reach the server")
			}
			if tc.name == "allowed method" && (len(got) != 1 || got[0].msg.Method != "custom/echo" || got[0].header.Get("Mcp-Method") != "custom/echo") {
				t.Errorf("the allowed method reached the server as %+v", got)
			}
			rig.noCanary(t, body)
		})
	}
	pre := 0
	for _, r := range mcpRecords(t, rig.records.String()) {
		if r["interception_point"] == "pre_tool_call" {
			pre++
		}
	}
	if pre != 3 { // the two calls that reached the server, and custom/echo
		t.Errorf("%d pre_tool_call records, want 3", pre)
	}
}

// Notifications the gateway forwards carry only what the gateway knows
// their meaning of; GET is refused; DELETE is relayed with its session.
func TestMCPHostileClientTransport(t *testing.T) {
	up := newHostileMCP(t)
	// The client holds the gateway's seal of the server's session id.
	secret := strings.Repeat("k", 32)
	t.Setenv("MCP_HOSTILE_SEAL", secret)
	keys, err := seal.New(seal.Key{ID: "t1", Secret: []byte(secret)})
	if err != nil {
		t.Fatal(err)
	}
	sealed := keys.SealString("mcp.session.fs", "sess-1")
	rig := startMCPRig(t, oneServer(up.url, ""), "seal:\n  keys:\n    - {id: t1, secret_env: MCP_HOSTILE_SEAL}\n", "")

	status, _, body := rig.post(t, "/mcp/fs", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"`+mcpCanary+`","_meta":{"x":"`+mcpCanary+`"}}}`,
		http.Header{"Mcp-Session-Id": {sealed}, "Authorization": {"Bearer " + mcpCanary}})
	got := up.received()
	if status != 202 || len(got) != 1 {
		t.Fatalf("cancelled: %d %s, server got %d", status, body, len(got))
	}
	if got[0].body != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}` || got[0].header.Get("Mcp-Session-Id") != "sess-1" {
		t.Errorf("the server received %s %v", got[0].body, got[0].header)
	}
	up.answer(nil)
	status, _, _ = rig.post(t, "/mcp/fs", `{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"x":"`+mcpCanary+`"}}}`, nil)
	if got := up.received(); status != 202 || len(got) != 1 || got[0].body != `{"jsonrpc":"2.0","method":"notifications/initialized"}` {
		t.Errorf("initialized: %d, server got %+v", status, got)
	}
	up.answer(nil)
	status, _, _ = rig.post(t, "/mcp/fs", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":"`+mcpCanary+`"}}}`, nil)
	if got := up.received(); status != 400 || len(got) != 0 {
		t.Errorf("cancelled with an object id: %d, server got %d", status, len(got))
	}

	up.answer(nil)
	resp, err := http.Get(rig.url + "/mcp/fs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST, DELETE" || len(up.received()) != 0 {
		t.Errorf("GET: %d Allow %q, server got %d", resp.StatusCode, resp.Header.Get("Allow"), len(up.received()))
	}

	for _, tc := range []struct {
		sid, server string // what the client sends, what the server gets
		status      int
		relayed     bool
	}{{sealed, "sess-1", 202, true}, {"sess-1", "", 404, false}, {"bad id", "", 404, false}, {"", "", 202, true}} {
		up.answer(nil)
		req, _ := http.NewRequest(http.MethodDelete, rig.url+"/mcp/fs", nil)
		if tc.sid != "" {
			req.Header.Set("Mcp-Session-Id", tc.sid)
		}
		req.Header.Set("Authorization", "Bearer "+mcpCanary)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := up.received()
		if resp.StatusCode != tc.status || (len(got) == 1) != tc.relayed {
			t.Errorf("DELETE %q: %d, server got %d", tc.sid, resp.StatusCode, len(got))
			continue
		}
		if tc.relayed && (got[0].method != http.MethodDelete || got[0].header.Get("Mcp-Session-Id") != tc.server || got[0].header.Get("Authorization") != "") {
			t.Errorf("DELETE relayed as %s %v", got[0].method, got[0].header)
		}
	}
	rig.noCanary(t)
}

// The official Go SDK client opens a GET stream after initializing; the
// gateway's 405 is the transport's way to decline it, and the client goes
// on.
func TestMCPSDKClientAfterGET405(t *testing.T) {
	up := newMCPUpstream(t, false)
	gw, _ := startMCPGateway(t, up, "  - {name: pass, type: allow}\n")
	var mu sync.Mutex
	var gets []int
	client := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil)
	transport := &sdk.StreamableClientTransport{Endpoint: gw + "/mcp/fs", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := http.DefaultTransport.RoundTrip(r)
			if err == nil && r.Method == http.MethodGet {
				mu.Lock()
				gets = append(gets, resp.StatusCode)
				mu.Unlock()
			}
			return resp, err
		})}}
	cs, err := client.Connect(context.Background(), transport, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "a"}})
	if err != nil || textOf(t, r) != "echo: a" {
		t.Fatalf("call after the GET: %v %+v", err, r)
	}
	r, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "b"}})
	if err != nil || textOf(t, r) != "echo: b" {
		t.Fatalf("second call: %v %+v", err, r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gets) == 0 || gets[0] != 405 {
		t.Errorf("GET statuses %v, want the client's GET answered 405", gets)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

const (
	mcpKeyChat  = "hgk_mcp-chat-only-key"
	mcpKeyOther = "hgk_mcp-other-server-key"
	mcpKeyAll   = "hgk_mcp-all-servers-key"
)

func keyHash(k string) string {
	s := sha256.Sum256([]byte(k))
	return hex.EncodeToString(s[:])
}

// With keys, the key decides which APIs and servers a client may reach;
// the client's key never reaches a server, the server's configured
// credential does.
func TestMCPKeys(t *testing.T) {
	up, other := newHostileMCP(t), newHostileMCP(t)
	t.Setenv("MCP_HOSTILE_SERVER_TOKEN", "Bearer server-token")
	block := "  servers:\n    - name: fs\n      url: " + up.url + "\n      headers_env: {Authorization: MCP_HOSTILE_SERVER_TOKEN}\n      headers: {X-Tenant: t1}\n" +
		"    - name: other\n      url: " + other.url + "\n"
	auth := "auth:\n  mode: keys\n  api_keys:\n" +
		"    - {name: chat, sha256: " + keyHash(mcpKeyChat) + ", apis: [chat_completions]}\n" +
		"    - {name: other-only, sha256: " + keyHash(mcpKeyOther) + ", apis: [mcp], mcp_servers: [other]}\n" +
		"    - {name: all, sha256: " + keyHash(mcpKeyAll) + ", apis: [mcp, chat_completions]}\n"
	rig := startMCPRig(t, block, auth, "")
	bearer := func(k string) http.Header { return http.Header{"Authorization": {"Bearer " + k}} }
	for _, tc := range []struct {
		name   string
		path   string
		h      http.Header
		status int
		server *hostileMCP
	}{
		{"no key", "/mcp/fs", nil, 401, nil},
		{"unknown key", "/mcp/fs", bearer("hgk_" + mcpCanary), 401, nil},
		{"key without mcp", "/mcp/fs", bearer(mcpKeyChat), 403, nil},
		{"key limited to another server", "/mcp/fs", bearer(mcpKeyOther), 404, nil},
		{"key limited to this server", "/mcp/other", bearer(mcpKeyOther), 200, other},
		{"key for every server", "/mcp/fs", bearer(mcpKeyAll), 200, up},
		{"x-api-key", "/mcp/fs", http.Header{"X-Api-Key": {mcpKeyAll}}, 200, up},
		{"unknown server", "/mcp/nope", bearer(mcpKeyAll), 404, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.answer(func(w http.ResponseWriter, m rpcMsg) { writeJSONRPC(w, m.ID, `{"content":[]}`) })
			other.answer(func(w http.ResponseWriter, m rpcMsg) { writeJSONRPC(w, m.ID, `{"content":[]}`) })
			status, _, body := rig.post(t, tc.path, toolsCall, tc.h)
			if status != tc.status {
				t.Errorf("client got %d %s, want %d", status, body, tc.status)
			}
			for _, s := range []*hostileMCP{up, other} {
				got := s.received()
				if (s == tc.server) != (len(got) == 1) {
					t.Errorf("a server received %d requests", len(got))
				}
				for _, r := range got {
					if strings.Contains(fmt.Sprint(r.header), "hgk_") {
						t.Errorf("the client's key reached the server: %v", r.header)
					}
					if s == up && (r.header.Get("Authorization") != "Bearer server-token" || r.header.Get("X-Tenant") != "t1") {
						t.Errorf("the server's configured headers are missing: %v", r.header)
					}
					if s == other && r.header.Get("Authorization") != "" {
						t.Errorf("the other server got Authorization %q", r.header.Get("Authorization"))
					}
				}
			}
			if strings.Contains(body, mcpKeyOther) || strings.Contains(rig.logs.String(), "hgk_") {
				t.Errorf("a key is in the answer or the logs")
			}
		})
	}
	// DELETE and GET are held to the same keys.
	req, _ := http.NewRequest(http.MethodDelete, rig.url+"/mcp/fs", nil)
	req.Header.Set("Authorization", "Bearer "+mcpKeyOther)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || len(up.received()) != 0 {
		t.Errorf("DELETE with a key limited to another server: %d", resp.StatusCode)
	}
	rig.noCanary(t)
}

// An interceptor that times out or fails at pre_tool_call, or a session
// store that is down, blocks the call: no request reaches the server and
// the client gets an error result with the host_error reason.
func TestMCPFailsClosed(t *testing.T) {
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/hang" {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		http.Error(w, "broken "+mcpCanary, http.StatusInternalServerError)
	}))
	t.Cleanup(remote.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	for _, tc := range []struct {
		name, extra, policy, reason string
	}{
		{"interceptor timeout", "enforcement:\n  interceptor_timeout: 1s\n",
			"  - {name: hang, type: http, url: \"" + remote.URL + "/hang\", timeout: 200ms, retries: 0, points: [pre_tool_call]}\n", "host_error:interceptor_timeout"},
		{"remote interceptor failing", "",
			"  - {name: broken, type: http, url: \"" + remote.URL + "/fail\", timeout: 500ms, retries: 0, points: [pre_tool_call]}\n", "host_error:"},
		{"session store down", "sessions:\n  store: redis\n  redis_url: redis://" + closed + "\n", "", "host_error:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newHostileMCP(t)
			rig := startMCPRig(t, oneServer(up.url, ""), tc.extra, tc.policy)
			sessions := []string{"", "run-closed"}
			if tc.name == "session store down" {
				// A per-request session lives in the request alone.
				sessions = sessions[1:]
			}
			for _, session := range sessions {
				h := http.Header{}
				if session != "" {
					h.Set("Agent-Hooks-Session", session)
				}
				status, _, body := rig.post(t, "/mcp/fs", toolsCall, h)
				result, _, _ := rpcAnswer(t, body)
				meta, _ := result["_meta"].(map[string]any)
				verdict, _ := meta["hooks-gateway/verdict"].(map[string]any)
				if status != 200 || result["isError"] != true || !strings.HasPrefix(fmt.Sprint(verdict["code"]), tc.reason) {
					t.Errorf("session %q: client got %d %s, want an isError result with %s", session, status, body, tc.reason)
				}
				// Another method fails closed with a JSON-RPC error.
				status, _, body = rig.post(t, "/mcp/fs", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h)
				if _, code, _ := rpcAnswer(t, body); status != 200 || code != -32002 {
					t.Errorf("session %q: tools/list got %d %s, want -32002", session, status, body)
				}
			}
			if got := up.received(); len(got) != 0 {
				t.Errorf("the server received %d requests", len(got))
			}
			rig.noCanary(t)
		})
	}
}

// Without Agent-Hooks-Session each request is a session of its own,
// startup to shutdown; with one, an agent's model calls and tool calls
// form one gapless trail in the order they were made.
func TestMCPSessions(t *testing.T) {
	up := newHostileMCP(t)
	rig := startMCPRig(t, oneServer(up.url, ""), "", "")
	for range 3 {
		if status, _, body := rig.post(t, "/mcp/fs", toolsCall, nil); status != 200 || strings.Contains(body, "error") {
			t.Fatalf("%d %s", status, body)
		}
	}
	recs := mcpRecords(t, rig.records.String())
	sessions := pointsOf(recs)
	if len(sessions) != 3 {
		t.Errorf("%d sessions, want one per request", len(sessions))
	}
	for id, points := range sessions {
		if strings.Join(points, " ") != "agent_startup pre_tool_call post_tool_call agent_shutdown" {
			t.Errorf("session %s: %v", id, points)
		}
	}
	for i, r := range recs {
		if seq := r["sequence"].(float64); int(seq) != i%4 {
			t.Errorf("record %d: sequence %v", i, seq)
		}
	}

	rig = startMCPRig(t, oneServer(up.url, ""), "", "")
	h := http.Header{"Agent-Hooks-Session": {"run-mixed"}}
	chat := func() {
		status, _, body := rig.post(t, "/v1/chat/completions", `{"model":"mock","messages":[{"role":"user","content":"hi"}]}`, h)
		if status != 200 {
			t.Fatalf("chat: %d %s", status, body)
		}
	}
	tool := func() {
		if status, _, body := rig.post(t, "/mcp/fs", toolsCall, h); status != 200 || strings.Contains(body, "error") {
			t.Fatalf("tool: %d %s", status, body)
		}
	}
	chat()
	tool()
	tool()
	chat()
	tool()
	recs = mcpRecords(t, rig.records.String())
	var points []string
	trail := proxy.NewOneTrail("run-mixed") // one trail id: run-mixed and the incarnation the memory store minted
	for i, r := range recs {
		if id, _ := r["session_id"].(string); !trail.Is(t, id) {
			t.Errorf("record %d in session %v", i, r["session_id"])
		}
		if int(r["sequence"].(float64)) != i {
			t.Errorf("record %d has sequence %v", i, r["sequence"])
		}
		if p := fmt.Sprint(r["interception_point"]); p != "input" && p != "output" {
			points = append(points, p)
		}
	}
	want := "agent_startup pre_model_call post_model_call pre_tool_call post_tool_call pre_tool_call post_tool_call pre_model_call post_model_call pre_tool_call post_tool_call"
	if strings.Join(points, " ") != want {
		t.Errorf("trail %v\nwant  %s", points, want)
	}
}
