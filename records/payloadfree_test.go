package records_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/records"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// Two secrets: one the client sends, one an interceptor writes in its
// place. Neither may reach any sink.
const (
	secretIn  = "SECRET-IN-7f3a9c1e-only-in-the-target"
	secretOut = "SECRET-OUT-b42d6e08-only-in-the-transform"
)

// TestNoSinkReceivesPayload emits, through a real Emitter, contexts whose
// targets carry secretIn, with an interceptor that transforms them to
// secretOut and another that denies with a message free of both, and
// checks every sink's output for either secret.
func TestNoSinkReceivesPayload(t *testing.T) {
	// stdout-like writer
	var stdout bytes.Buffer
	writer := records.NewWriter(&stdout)

	// jsonl, rotating so that several files are written
	dir := t.TempDir()
	path := filepath.Join(dir, "records.jsonl")
	jsonl, err := records.OpenJSONL(path, records.JSONLOptions{MaxBytes: 1 << 10, MaxFiles: 50})
	if err != nil {
		t.Fatal(err)
	}

	// redis-stream
	redisURL, _ := redistest.Start(t)
	stream, err := records.NewRedisStream(records.RedisStreamOptions{URL: redisURL, Stream: "payload-free"})
	if err != nil {
		t.Fatal(err)
	}

	// http
	var mu sync.Mutex
	var posted bytes.Buffer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posted.Write(b)
		mu.Unlock()
	}))
	defer srv.Close()
	hs, err := records.NewHTTP(records.HTTPOptions{URL: srv.URL, MaxBatch: 2, FlushInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}

	rewrite := enforcement.InterceptorFunc(func(_ context.Context, c enforcement.Context) (enforcement.Verdict, error) {
		if tgt, ok := c.Target().(map[string]any); ok {
			if s, ok := tgt["content"].(string); ok && strings.Contains(s, secretIn) {
				return enforcement.TransformTo("$target.content", strings.ReplaceAll(s, secretIn, secretOut)), nil
			}
		}
		return enforcement.Allow(), nil
	})
	block := enforcement.InterceptorFunc(func(_ context.Context, c enforcement.Context) (enforcement.Verdict, error) {
		if c.Point() == enforcement.Output {
			return enforcement.Deny("policy:blocked", "blocked: the output matched a rule"), nil
		}
		return enforcement.Allow(), nil
	})
	em, err := enforcement.NewEmitter(enforcement.Options{
		Interceptors: []enforcement.Registration{{Name: "rewrite", Interceptor: rewrite}, {Name: "block", Interceptor: block}},
		Composition:  enforcement.Composition{Profile: enforcement.SequentialRunAll},
		Sink:         records.Fanout{writer, jsonl, stream, hs},
	})
	if err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	b := &enforcement.Builder{
		Agent:     enforcement.Agent{ID: "agent-1", Framework: "test"},
		SessionID: "payload-free-session",
		Sequence:  &enforcement.Counter{},
	}
	build := func(p enforcement.Point, fields map[string]any) enforcement.Context {
		t.Helper()
		c, err := b.Build(ctx, p, fields)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	emitted := 0
	emit := func(c enforcement.Context) *enforcement.Outcome {
		t.Helper()
		out, err := em.Emit(ctx, c)
		var blocked *enforcement.BlockedError
		if err != nil && !errors.As(err, &blocked) {
			t.Fatal(err)
		}
		emitted++
		return out
	}

	emit(build(enforcement.AgentStartup, enforcement.StartupFields([]string{"search"})))
	for range 5 {
		out := emit(build(enforcement.Input, enforcement.InputFields("my key is "+secretIn, "user")))
		if got := out.Target().(map[string]any)["content"]; got != "my key is "+secretOut {
			t.Fatalf("the transform did not apply (target content %q): the test proves nothing", got)
		}
		if out.Verdict.Transform == nil || !strings.Contains(out.Verdict.Transform.Value.(string), secretOut) {
			t.Fatalf("the combined verdict lacks the transform value: the test proves nothing")
		}
	}
	out := emit(build(enforcement.Output, enforcement.OutputFields("answer with "+secretIn)))
	if out.Proceed || out.Verdict.Decision != enforcement.DecisionDeny {
		t.Fatalf("output was not denied: %+v", out.Verdict)
	}
	em.Refuse(ctx, build(enforcement.PostModelCall, enforcement.PostModelFields("m", enforcement.ModelResponse{Content: secretIn, FinishReason: "stream_incomplete"})),
		"host_error:streaming_unsupported", "the stream could not be buffered")
	emitted++
	emit(build(enforcement.AgentShutdown, enforcement.ShutdownFields(enforcement.ShutdownCompleted)))
	if n := em.SinkFailures(); n != 0 {
		t.Fatalf("%d sink failures", n)
	}

	for name, c := range map[string]io.Closer{"stdout": writer, "jsonl": jsonl, "redis-stream": stream, "http": hs} {
		if err := c.Close(); err != nil {
			t.Fatalf("close %s: %v", name, err)
		}
	}

	outputs := map[string]string{"stdout": stdout.String()}
	files, _ := filepath.Glob(path + "*")
	var all strings.Builder
	for _, f := range records.TrailOrder(files) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(data)
	}
	outputs["jsonl"] = all.String()
	opts, _ := redis.ParseURL(redisURL)
	rc := redis.NewClient(opts)
	defer rc.Close()
	msgs, err := rc.XRange(ctx, "payload-free", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var fromRedis strings.Builder
	for _, m := range msgs {
		for k, v := range m.Values {
			fromRedis.WriteString(k + "=" + v.(string) + "\n")
		}
	}
	outputs["redis-stream"] = fromRedis.String()
	mu.Lock()
	outputs["http"] = posted.String()
	mu.Unlock()

	for name, text := range outputs {
		if n := strings.Count(text, "\n"); n != emitted {
			t.Errorf("%s received %d records, want %d", name, n, emitted)
		}
		for _, secret := range []string{secretIn, secretOut, "SECRET"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s output contains %q:\n%s", name, secret, text)
			}
		}
		if !strings.Contains(text, `"$target.content"`) || !strings.Contains(text, "blocked: the output matched a rule") {
			t.Errorf("%s output lacks the transform path or the deny message (did the records arrive?):\n%s", name, text)
		}
	}

	// The trail the emitter left is complete and gapless.
	r, err := records.VerifyFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 0 || r.Records != emitted {
		t.Errorf("verify: %s %v", r.Summary(), r.Findings)
	}
}
