package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// trailingUsers is a chat request of n user messages in a row.
func trailingUsers(n int) string {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-test","messages":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"role":"user","content":"x"}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// One request cannot make the gateway emit without bound: a request with
// more messages than limits.max_messages is refused before they are
// decoded, one with more trailing user messages than
// limits.max_input_messages (one input emission each) before anything is
// emitted; under both bounds each message is one input record.
func TestTrailingUserMessagesAreBounded(t *testing.T) {
	u := newUpstream(t, jsonReply(completionJSON))
	g := newGateway(t, gatewayConfig{upstream: u.URL + "/v1"})

	// The abuse report's request: 290,000 trailing user messages (9.3 MB).
	status, _, b := g.post(t, trailingUsers(290_000), nil)
	if status != http.StatusBadRequest {
		t.Fatalf("290,000 messages: status %d, want 400: %.300s", status, b)
	}
	if e := errorBody(t, b); e.Code != wire.CodeTooManyMessages || e.Param == nil || *e.Param != "messages" || !strings.Contains(e.Message, "limits.max_messages") {
		t.Errorf("error %+v, want %s on messages naming limits.max_messages", e, wire.CodeTooManyMessages)
	}

	// Under max_messages but over max_input_messages.
	status, _, b = g.post(t, trailingUsers(5_000), nil)
	if status != http.StatusBadRequest {
		t.Fatalf("5,000 trailing user messages: status %d, want 400: %.300s", status, b)
	}
	if e := errorBody(t, b); e.Code != "too_many_input_messages" || !strings.Contains(e.Message, "limits.max_input_messages") {
		t.Errorf("error %+v, want too_many_input_messages naming limits.max_input_messages", e)
	}
	if n := len(g.records.all()); n != 0 {
		t.Errorf("refused requests wrote %d records", n)
	}
	if n := len(u.received()); n != 0 {
		t.Errorf("refused requests reached the upstream %d times", n)
	}

	// At the bound: one input per message, and nothing else added.
	status, _, b = g.post(t, trailingUsers(100), nil)
	if status != http.StatusOK {
		t.Fatalf("100 trailing user messages: status %d: %.300s", status, b)
	}
	recs := g.records.all()
	if n := countPoint(recs, enforcement.Input); n != 100 {
		t.Errorf("%d input records, want 100", n)
	}
	if len(recs) != 100+5 { // agent_startup, pre/post_model_call, output, agent_shutdown
		t.Errorf("%d records, want 105", len(recs))
	}
}

// A smaller configured bound holds too, and a client that emits its own
// turn points (so the gateway emits no input) is not bound by it.
func TestMaxInputMessagesConfigured(t *testing.T) {
	u := newUpstream(t, jsonReply(completionJSON))
	g := newGateway(t, gatewayConfig{upstream: u.URL + "/v1", maxInputMessages: 2, maxMessages: 5})
	if status, _, b := g.post(t, trailingUsers(3), nil); status != http.StatusBadRequest {
		t.Fatalf("3 trailing user messages over a bound of 2: status %d: %.300s", status, b)
	}
	if status, _, b := g.post(t, trailingUsers(6), nil); status != http.StatusBadRequest || errorBody(t, b).Code != wire.CodeTooManyMessages {
		t.Fatalf("6 messages over a bound of 5: status %d: %.300s", status, b)
	}
	if status, _, b := g.post(t, trailingUsers(2), nil); status != http.StatusOK {
		t.Fatalf("2 trailing user messages: status %d: %.300s", status, b)
	}
}
