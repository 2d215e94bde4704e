package proxy

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// countingStore counts the store steps (each one round trip on Redis) a
// model call takes.
type countingStore struct {
	sessions.Store
	mu    sync.Mutex
	steps []string
}

func (c *countingStore) step(s string) {
	c.mu.Lock()
	c.steps = append(c.steps, s)
	c.mu.Unlock()
}

func (c *countingStore) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.steps
	c.steps = nil
	return out
}

func (c *countingStore) BeginCall(ctx context.Context, k sessions.Key, o sessions.Owner, call sessions.Call) (sessions.CallStart, error) {
	c.step("BeginCall")
	return c.Store.BeginCall(ctx, k, o, call)
}

func (c *countingStore) Next(ctx context.Context, k sessions.Key) (int64, error) {
	c.step("Next")
	return c.Store.Next(ctx, k)
}

func (c *countingStore) NextMarkingInputs(ctx context.Context, k sessions.Key, ids []string) (int64, error) {
	c.step("NextMarkingInputs")
	return c.Store.NextMarkingInputs(ctx, k, ids)
}

func (c *countingStore) InputsJudged(ctx context.Context, k sessions.Key, ids []string) ([]bool, error) {
	c.step("InputsJudged")
	return c.Store.InputsJudged(ctx, k, ids)
}

func (c *countingStore) Release(ctx context.Context, k sessions.Key, id string) error {
	c.step("Release")
	return c.Store.Release(ctx, k, id)
}

func (c *countingStore) Admit(ctx context.Context, k sessions.Key) error {
	c.step("Admit")
	return c.Store.Admit(ctx, k)
}

// The store steps of a managed session's model calls, each a Redis round
// trip: a tool round (no new user message) takes three, a turn with a new
// user message five (its input, pre_model_call, post_model_call and output
// each need a number; the first comes with the lease), and the inputs the
// session judged are not judged again.
func TestManagedCallStoreSteps(t *testing.T) {
	var answer = completionJSON
	var mu sync.Mutex
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		mu.Lock()
		a := answer
		mu.Unlock()
		jsonReply(a)(w, r, body)
	})
	store := &countingStore{Store: sessions.NewMemory(sessions.Options{})}
	gw := newGateway(t, gatewayConfig{upstream: up.URL + "/v1", store: store})
	h := map[string]string{HeaderSession: "steps"}
	call := func(body string) []string {
		t.Helper()
		if status, _, b := gw.post(t, body, h); status != http.StatusOK {
			t.Fatalf("%d %s", status, b)
		}
		// The lease is given up once the answer is on the wire: wait for it.
		waitFor(t, 5*time.Second, "the call's release", func() bool {
			n, err := store.InFlight(context.Background(), sessions.Key{ID: "steps"})
			return err == nil && n == 0
		})
		return store.take()
	}
	first := `{"model":"m","messages":[{"role":"user","content":"list /tmp"}]}`
	// The claim: agent_startup takes 0 with it, its verdict admits the
	// session; then input, pre_model_call, post_model_call and output.
	steps(t, call(first), "BeginCall", "Admit", "Next", "NextMarkingInputs", "Next", "Next", "Release")
	mu.Lock()
	answer = toolCallJSON
	mu.Unlock()
	tool := `{"model":"m","messages":[{"role":"user","content":"list /tmp"},{"role":"assistant","content":"Hello there, FRIEND"},{"role":"user","content":"and /etc"}]}`
	// input numbered by BeginCall, pre marking it judged, post; no output
	// after tool calls.
	steps(t, call(tool), "BeginCall", "NextMarkingInputs", "Next", "Release")
	round := `{"model":"m","messages":[{"role":"user","content":"list /tmp"},{"role":"assistant","content":"Hello there, FRIEND"},{"role":"user","content":"and /etc"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_a","content":"x"}]}`
	steps(t, call(round), "BeginCall", "Next", "Release") // pre numbered by BeginCall, post
	mu.Lock()
	answer = completionJSON
	mu.Unlock()
	steps(t, call(round), "BeginCall", "Next", "Next", "Release") // pre by BeginCall, post, output
	if n := countPoint(gw.records.all(), "input"); n != 2 {
		t.Errorf("%d input records, want 2: judged inputs are not judged again", n)
	}
}

func steps(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("store steps %v, want %v", got, want)
	}
}
