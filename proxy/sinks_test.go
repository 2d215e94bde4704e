package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/records"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// TestBuildWiresEveryRecordSink builds a gateway whose configuration names
// one sink of every type, serves requests through it, and checks that each
// sink received every record, that none carries the request's content, and
// that closing the assembly drains the http sink.
func TestBuildWiresEveryRecordSink(t *testing.T) {
	t.Setenv("HOOKS_GATEWAY_LISTEN", "")
	t.Setenv("HOOKS_GATEWAY_REDIS_URL", "")
	t.Setenv("SINK_TOKEN_T", "sink-token-t")
	redisURL, _ := redistest.Start(t)

	var mu sync.Mutex
	var posted bytes.Buffer
	var auth []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posted.Write(b)
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer receiver.Close()

	path := filepath.Join(t.TempDir(), "records.jsonl")
	cfg, err := config.Parse("gateway.yaml", []byte(`upstreams:
  - name: mock
    type: mock
interceptors:
  - name: redact-email
    type: regex
    points: [pre_model_call]
    action: redact
    patterns: ['[a-z]+@example\.com']
records:
  sinks:
    - type: stdout
    - type: jsonl
      path: `+path+`
      max_bytes: 1KiB
      max_files: 100
    - type: redis-stream
      redis_url: `+redisURL+`
      stream: gw:records
    - type: http
      url: `+receiver.URL+`/ingest
      token_env: SINK_TOKEN_T
      flush_interval: 1h
`))
	if err != nil {
		t.Fatal(err)
	}
	var stdout lockedBuffer
	asm, err := Build(context.Background(), cfg, &stdout, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(asm.Server)
	defer hs.Close()
	const secret = "carol@example.com"
	for range 3 {
		status, _, body := do(t, http.MethodPost, hs.URL+"/v1/chat/completions",
			`{"model":"mock","messages":[{"role":"user","content":"write to `+secret+`"}]}`, nil)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
	}
	hs.Close()
	if err := asm.Close(); err != nil { // drains the http sink (flush_interval is an hour)
		t.Fatal(err)
	}

	files, _ := filepath.Glob(path + "*")
	if len(files) < 2 {
		t.Fatalf("jsonl files %v: max_bytes did not rotate", files)
	}
	var trail strings.Builder
	for _, f := range records.TrailOrder(files) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte(`{"`+records.MarkerKey+`":`)) {
			t.Errorf("%s does not start with the policy marker", filepath.Base(f))
		}
		trail.Write(b)
	}
	opts, _ := redis.ParseURL(redisURL)
	rc := redis.NewClient(opts)
	defer rc.Close()
	msgs, err := rc.XRange(context.Background(), "gw:records", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var stream strings.Builder
	for _, m := range msgs {
		v, ok := m.Values[records.StreamField]
		if !ok {
			v = m.Values[records.StreamMarkerField]
		}
		stream.WriteString(v.(string) + "\n")
	}
	mu.Lock()
	outputs := map[string]string{"stdout": stdout.String(), "jsonl": trail.String(), "redis-stream": stream.String(), "http": posted.String()}
	if auth[0] != "Bearer sink-token-t" {
		t.Errorf("http sink Authorization = %q", auth[0])
	}
	mu.Unlock()
	// Every sink starts with the policy's marker; the jsonl sink repeats it
	// at the top of each rotated file. Past the markers, all hold the same
	// records.
	version := asm.Server.Policy().Version
	for name, got := range outputs {
		first, rest, _ := strings.Cut(got, "\n")
		var m map[string]records.Marker
		if err := json.Unmarshal([]byte(first), &m); err != nil || m[records.MarkerKey].Version != version {
			t.Errorf("%s sink starts with %s, want the marker of %s", name, first, version)
		}
		var kept []string
		for _, l := range strings.SplitAfter(rest, "\n") {
			if !strings.HasPrefix(l, `{"`+records.MarkerKey+`":`) {
				kept = append(kept, l)
			}
		}
		outputs[name] = strings.Join(kept, "")
	}
	want := outputs["stdout"]
	if strings.Count(want, "\n") < 3*4 { // per request: startup, input, pre/post model, output, shutdown
		t.Fatalf("stdout holds too few records:\n%s", want)
	}
	for name, got := range outputs {
		if got != want {
			t.Errorf("%s sink received\n%s\nwant (as stdout)\n%s", name, got, want)
		}
		if strings.Contains(got, secret) || strings.Contains(got, "carol") {
			t.Errorf("%s sink received the request's content", name)
		}
	}
	r, err := records.VerifyFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors() != 0 || r.Warnings() != 0 || r.Sessions != 3 {
		t.Errorf("records verify: %s: %v", r.Summary(), r.Findings)
	}
}
