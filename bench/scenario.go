package main

import (
	"context"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

//go:embed configs/*.yaml
var configFS embed.FS

// scenario is one measured workload: a gateway configuration, a request
// and the upstream's answer, at a fixed rate.
type scenario struct {
	name        string
	description string
	config      string // file under configs/
	path        string // the model-call route: chatPath, responsesPath or messagesPath (mcpPath)
	// gatewayPath, when set, is the gateway's route where it differs from
	// the upstream's (mcpGatewayPath: the gateway serves MCP servers by
	// name).
	gatewayPath string
	// headers are sent with every request, beside Content-Type (the MCP
	// transport's).
	headers map[string]string
	// mcp marks a scenario of MCP tool calls: peers that route only model
	// calls (Portkey) are left out, and a denied call is checked first.
	mcp      bool
	rate     int // requests per second
	request  []byte
	upstream upstreamOptions
	managed  bool // managed sessions in Redis (needs redis-server)
	quick    bool // part of --quick
	// denyProbe sends the deny probe through the gateway before the load
	// (incremental scenarios: no unverdicted byte may reach the client).
	denyProbe bool
	// check, when set, inspects the gateway's answer to the probe request
	// and says what is wrong with it.
	check func(body string) string
	// sessions, when positive, spreads the requests over that many
	// managed sessions (Agent-Hooks-Session) in the gateway's own store.
	sessions int
	// skip, when set, says why the scenario cannot run (its captured
	// request is missing).
	skip string
	// rounds, duration and warmup, when set, replace the plan's defaults
	// (not values given on the command line).
	rounds           int
	duration, warmup time.Duration
	// run, when set, measures the scenario its own way (chat50).
	run func(ctx context.Context, sc scenario, p plan) ([]*ScenarioResult, error)
}

// scenarios lists every workload, in report order.
func scenarios() []scenario {
	json1k := upstreamOptions{contentBytes: 1024, chunks: 200}
	tool := upstreamOptions{contentBytes: 1024, toolCall: true}
	// paced is a model generating 200 tokens 10 ms apart: a 2 s answer.
	paced := upstreamOptions{contentBytes: 1024, chunks: 200, interval: 10 * time.Millisecond}
	return []scenario{
		{name: "json", description: "2 KiB request, 1 KiB JSON answer; default policy, per-request sessions",
			config: "default.yaml", path: chatPath, rate: 1000, request: chatRequest(2048, false, false), upstream: json1k, quick: true},
		{name: "stream200", description: "2 KiB request, 200-chunk SSE answer; default policy",
			config: "default.yaml", path: chatPath, rate: 200, request: chatRequest(2048, true, false), upstream: json1k},
		{name: "conv64k", description: "64 KiB conversation, 1 KiB JSON answer; default policy",
			config: "default.yaml", path: chatPath, rate: 300, request: chatRequest(64<<10, false, false), upstream: json1k},
		{name: "toolrewrite", description: "tool-call answer whose arguments the policy redacts (regex redact at post_model_call)",
			config: "toolrewrite.yaml", path: chatPath, rate: 1000, request: chatRequest(2048, false, true),
			upstream: tool, check: checkToolRewrite},
		{name: "redis", description: "as json, managed sessions (Agent-Hooks-Session, 1,000 sessions) in Redis",
			config: "redis.yaml", path: chatPath, rate: 1000, request: chatRequest(2048, false, false), upstream: json1k, managed: true},
		{name: "allow", description: "as json, allow-only policy",
			config: "allow.yaml", path: chatPath, rate: 1000, request: chatRequest(2048, false, false), upstream: json1k},
		{name: "chain5", description: "as json, five interceptors (cel, redact, tools, budget, regex)",
			config: "chain5.yaml", path: chatPath, rate: 1000, request: chatRequest(2048, false, true), upstream: json1k},
		{name: "responses", description: "as json over the Responses API (POST /v1/responses, OpenAI upstream)",
			config: "default.yaml", path: responsesPath, rate: 1000, request: responsesRequest(2048, false, false), upstream: json1k,
			quick: true, check: expect(`"type":"output_text"`)},
		{name: "responses_stream200", description: "as stream200 over the Responses API: 200 output_text deltas",
			config: "default.yaml", path: responsesPath, rate: 200, request: responsesRequest(2048, true, false), upstream: json1k,
			check: expect("event: response.completed")},
		{name: "responses_toolrewrite", description: "as toolrewrite over the Responses API: a function_call item",
			config: "toolrewrite.yaml", path: responsesPath, rate: 1000, request: responsesRequest(2048, false, true),
			upstream: tool, check: checkToolRewrite},
		{name: "messages", description: "as json over the Anthropic Messages API (POST /v1/messages, anthropic upstream)",
			config: "messages.yaml", path: messagesPath, rate: 1000, request: messagesRequest(2048, false, false), upstream: json1k,
			quick: true, check: expect(`"type":"text"`)},
		{name: "messages_stream200", description: "as stream200 over the Messages API: 200 text_delta events",
			config: "messages.yaml", path: messagesPath, rate: 200, request: messagesRequest(2048, true, false), upstream: json1k,
			check: expect("event: message_stop")},
		{name: "messages_toolrewrite", description: "as toolrewrite over the Messages API: a tool_use block",
			config: "messages_toolrewrite.yaml", path: messagesPath, rate: 1000, request: messagesRequest(2048, false, true),
			upstream: tool, check: checkToolRewrite},
		{name: "stream_paced", description: "2 KiB request, 200-chunk SSE answer paced 10 ms apart (a 2 s generation); default policy, buffered",
			config: "default.yaml", path: chatPath, rate: 200, request: chatRequest(2048, true, false), upstream: paced,
			check: expect("data: [DONE]")},
		{name: "stream_paced_incremental", description: "as stream_paced, streaming.mode: incremental; deny probe first",
			config: "incremental.yaml", path: chatPath, rate: 200, request: chatRequest(2048, true, false), upstream: paced,
			check: expect("data: [DONE]"), denyProbe: true},
		{name: "responses_stream_paced_incremental", description: "as stream_paced_incremental over the Responses API",
			config: "incremental.yaml", path: responsesPath, rate: 200, request: responsesRequest(2048, true, false), upstream: paced,
			check: expect("event: response.completed"), denyProbe: true},
		{name: "messages_stream_paced_incremental", description: "as stream_paced_incremental over the Messages API",
			config: "messages_incremental.yaml", path: messagesPath, rate: 200, request: messagesRequest(2048, true, false), upstream: paced,
			check: expect("event: message_stop"), denyProbe: true},
		{name: "mcp", description: "MCP tools/call (2026-07-28, stateless) to an official Go SDK server answering 1 KiB of text; default policy plus a tools deny list, per-request sessions",
			config: "mcp.yaml", path: mcpPath, gatewayPath: mcpGatewayPath, headers: mcpHeaders(mcpTool), rate: 500,
			request: mcpRequest(), upstream: json1k, duration: 4 * time.Second, mcp: true, quick: true, check: checkMCPResult},
	}
}

// expect is a probe check that the gateway's answer contains want (the
// surface's own shape, not an error or another surface's).
func expect(want string) func(body string) string {
	return func(body string) string {
		if !strings.Contains(body, want) {
			return fmt.Sprintf("the answer lacks %q", want)
		}
		return ""
	}
}

// checkToolRewrite confirms the policy rewrote the tool-call arguments.
func checkToolRewrite(body string) string {
	switch {
	case strings.Contains(body, "alice@example.com"):
		return "the tool-call arguments reached the client unredacted"
	case !strings.Contains(body, "[email]"):
		return "the answer carries no redacted tool-call arguments"
	}
	return ""
}

// writeConfig fills in a bench configuration's placeholders and writes it
// to dir.
func writeConfig(dir, name string, vars map[string]string) (string, error) {
	b, err := configFS.ReadFile("configs/" + name)
	if err != nil {
		return "", fmt.Errorf("configuration %s: %w", name, err)
	}
	pairs := make([]string, 0, 2*len(vars))
	for k, v := range vars {
		pairs = append(pairs, "{{"+k+"}}", v)
	}
	text := strings.NewReplacer(pairs...).Replace(string(b))
	if i := strings.Index(text, "{{"); i >= 0 {
		end := min(i+20, len(text))
		return "", fmt.Errorf("configuration %s: placeholder %q left unfilled", name, text[i:end])
	}
	path := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("configuration %s: %w", name, err)
	}
	return path, nil
}
