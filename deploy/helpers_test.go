package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// root is the repository root, seen from this package.
const root = ".."

func repoPath(parts ...string) string { return filepath.Join(append([]string{root}, parts...)...) }

func readFile(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(repoPath(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// metricSpec is one metric the gateway exports: its type and the labels
// every series carries.
type metricSpec struct {
	typ    string
	labels []string
}

// specMetrics is the gateway's metric contract: the names the dashboard,
// the alert rules and docs/operations.md may use. TestExporterMatchesSpec
// holds a running gateway's /metrics to it.
var specMetrics = map[string]metricSpec{
	"agent_hooks_emissions_total":                 {"counter", []string{"point", "decision", "reason_class", "mode"}},
	"agent_hooks_interceptor_verdicts_total":      {"counter", []string{"interceptor", "point", "decision"}},
	"agent_hooks_interceptor_duration_seconds":    {"histogram", []string{"interceptor", "point"}},
	"agent_hooks_interceptor_failures_total":      {"counter", []string{"interceptor", "reason"}},
	"agent_hooks_emission_duration_seconds":       {"histogram", []string{"point"}},
	"agent_hooks_transforms_applied_total":        {"counter", []string{"point"}},
	"agent_hooks_fold_truncated_total":            {"counter", nil},
	"agent_hooks_approvals_total":                 {"counter", []string{"outcome"}},
	"agent_hooks_records_total":                   {"counter", []string{"sink", "result"}},
	"agent_hooks_records_dropped_total":           {"counter", []string{"sink"}},
	"agent_hooks_sessions_active":                 {"gauge", nil},
	"agent_hooks_policy_reloads_total":            {"counter", []string{"result"}},
	"agent_hooks_policy_info":                     {"gauge", []string{"version"}},
	"hooks_gateway_requests_total":                {"counter", []string{"route", "code"}},
	"hooks_gateway_request_duration_seconds":      {"histogram", []string{"route", "stream"}},
	"hooks_gateway_overhead_seconds":              {"histogram", []string{"route"}},
	"hooks_gateway_upstream_requests_total":       {"counter", []string{"upstream", "code"}},
	"hooks_gateway_upstream_duration_seconds":     {"histogram", []string{"upstream"}},
	"hooks_gateway_stream_buffer_bytes":           {"histogram", nil},
	"hooks_gateway_stream_buffer_overflows_total": {"counter", nil},
	"hooks_gateway_stream_first_byte_seconds":     {"histogram", []string{"api", "mode"}},
	"hooks_gateway_stream_segments_total":         {"counter", []string{"api"}},
	"hooks_gateway_session_store_errors_total":    {"counter", []string{"op"}},
	"hooks_gateway_internal_errors_total":         {"counter", []string{"api", "stage"}},
	"hooks_gateway_buffer_budget_bytes":           {"gauge", nil},
	"hooks_gateway_buffer_budget_limit_bytes":     {"gauge", nil},
	"hooks_gateway_buffer_budget_refusals_total":  {"counter", []string{"stage"}},
	"hooks_gateway_overload_refusals_total":       {"counter", []string{"reason"}},
	"hooks_gateway_mcp_requests_total":            {"counter", []string{"server", "method", "outcome"}},
	"hooks_gateway_requests_in_flight":            {"gauge", nil},
	"hooks_gateway_session_cache_sessions":        {"gauge", nil},
	"hooks_gateway_session_cache_bytes":           {"gauge", nil},
	"hooks_gateway_session_cache_units_total":     {"counter", []string{"result"}},
	"hooks_gateway_denies_replayed_total":         {"counter", []string{"api"}},
}

var metricRef = regexp.MustCompile(`\b(?:agent_hooks|hooks_gateway)_[A-Za-z0-9_]+`)

// metricUse is one metric name found in a PromQL expression.
type metricUse struct {
	name   string // the family name
	series string // as written (with _bucket/_sum/_count)
}

// metricsIn extracts the gateway metric names an expression references,
// mapping histogram series (_bucket, _sum, _count) to their family.
func metricsIn(expr string) []metricUse {
	var out []metricUse
	for _, s := range metricRef.FindAllString(expr, -1) {
		name := s
		if _, ok := specMetrics[name]; !ok {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(s, suf); ok {
					name = base
					break
				}
			}
		}
		out = append(out, metricUse{name: name, series: s})
	}
	return out
}

// checkMetricUses reports names outside specMetrics and histogram series
// taken from non-histograms (or the reverse).
func checkMetricUses(t *testing.T, where, expr string) []metricUse {
	t.Helper()
	uses := metricsIn(expr)
	for _, u := range uses {
		spec, ok := specMetrics[u.name]
		if !ok {
			t.Errorf("%s: metric %q is not one the gateway exports (expr %s)", where, u.series, expr)
			continue
		}
		hist := u.series != u.name
		if hist != (spec.typ == "histogram") {
			t.Errorf("%s: %q used as %s, but %s is a %s", where, u.series, map[bool]string{true: "a histogram series", false: "a plain series"}[hist], u.name, spec.typ)
		}
	}
	return uses
}

// tool returns the path of an external program the test needs. Absent, the
// test is skipped, unless CI is set: CI installs it (.ci/run), so there its
// absence is a failure.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not on PATH; .ci/run installs it (Debian package prometheus)", name)
		}
		t.Skipf("%s is not on PATH (apt-get install prometheus); CI runs this test", name)
	}
	return p
}

// run runs a program and fails the test with its output if it fails.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// --- Markdown -----------------------------------------------------------

// headingAnchors returns the GitHub anchors of a Markdown document's
// headings (outside code fences), with GitHub's -1, -2 suffixes for
// repeats.
func headingAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := slug(text)
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// slug is GitHub's heading anchor: lower case, letters, digits, '_' and
// '-' kept, spaces to '-', everything else dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// codeBlocks returns the bodies of the fenced code blocks with the given
// info string.
func codeBlocks(md, lang string) []string {
	var out []string
	var cur *strings.Builder
	for _, line := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(line) == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	return out
}

// section returns a Markdown document's text from the heading line equal
// to heading up to the next heading of the same or a higher level.
func section(md, heading string) string {
	lines := strings.Split(md, "\n")
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	start := -1
	fence := false
	for i, line := range lines {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if fence {
			continue
		}
		if start < 0 {
			if strings.TrimSpace(line) == heading {
				start = i
			}
			continue
		}
		if strings.HasPrefix(line, "#") {
			l := len(line) - len(strings.TrimLeft(line, "#"))
			if l <= level {
				return strings.Join(lines[start:i], "\n")
			}
		}
	}
	if start < 0 {
		return ""
	}
	return strings.Join(lines[start:], "\n")
}

// --- a gateway on the embedded default ---------------------------------

// gateway serves the embedded default configuration (mock model, demo
// policy: redact e-mail addresses, deny credentials) on a loopback port, as
// `docker run hooks-gateway` does. Records are discarded.
type gateway struct {
	URL string
	srv *httptest.Server
}

func startGateway(t *testing.T) *gateway {
	t.Helper()
	for _, name := range []string{config.EnvListen, config.EnvRedisURL, config.EnvOpenAIKey, config.EnvOpenAIBaseURL} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	cfg := config.Default()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	asm, err := proxy.Build(context.Background(), cfg, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asm.Close() })
	srv := httptest.NewServer(asm.Server)
	t.Cleanup(srv.Close)
	return &gateway{URL: srv.URL, srv: srv}
}

// Traffic the embedded default's policy allows, transforms or denies.
const (
	promptAllowed = "hello"
	promptRedact  = "Please email bob@example.com the report"
	// The mock answers with the text after /say, which contains what looks
	// like an OpenAI key: deny-credentials denies it at post_model_call.
	promptLeak = "/say my key is sk-proj-abcdefghijklmnopqrstuvwx"
)

// chat sends one chat completion and returns the status and body.
func chat(t *testing.T, base, prompt string, stream bool) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"model":    "mock",
		"stream":   stream,
		"messages": []map[string]string{{"role": "user", "content": prompt}},
	})
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// family is one metric family of a text exposition.
type family struct {
	typ    string
	labels map[string]bool // label names on its samples (le and quantile excluded)
	series int
}

// scrape reads /metrics in the Prometheus text format. It fails the test
// unless /metrics answers 200.
func scrape(t *testing.T, base string) map[string]*family {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	return parseExposition(t, resp.Body)
}

func parseExposition(t *testing.T, r io.Reader) map[string]*family {
	t.Helper()
	fams := map[string]*family{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			parts := strings.Fields(f)
			if len(parts) != 2 {
				t.Fatalf("bad TYPE line %q", line)
			}
			fams[parts[0]] = &family{typ: parts[1], labels: map[string]bool{}}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, "{")
		if i := strings.IndexByte(name, ' '); i >= 0 {
			name, rest = name[:i], ""
		}
		f := fams[name]
		if f == nil {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(name, suf); ok && fams[base] != nil {
					f = fams[base]
					break
				}
			}
		}
		if f == nil {
			t.Fatalf("sample %q of no declared family", line)
		}
		if !strings.HasSuffix(name, "_bucket") {
			f.series++
		}
		for _, l := range labelNames(rest) {
			if l != "le" && l != "quantile" {
				f.labels[l] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return fams
}

// labelNames parses the label names of `a="x",b="y\"z"} 1`.
func labelNames(s string) []string {
	var names []string
	for len(s) > 0 && s[0] != '}' {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			break
		}
		names = append(names, strings.TrimSpace(strings.TrimPrefix(s[:eq], ",")))
		s = s[eq+1:]
		if len(s) == 0 || s[0] != '"' {
			break
		}
		i := 1
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		s = strings.TrimPrefix(s[min(i+1, len(s)):], ",")
	}
	return names
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
