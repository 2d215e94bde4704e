package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// TestToolCallPairing checks each opened tool call closes exactly once and
// that a close without an open (never opened, or closed already) reports
// false.
func TestToolCallPairing(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		k := key("tools")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		closeIs := func(id string, want bool) {
			t.Helper()
			if got, err := b.CloseToolCall(ctx, k, id); err != nil || got != want {
				t.Fatalf("CloseToolCall(%s) = %v, %v; want %v", id, got, err, want)
			}
		}
		closeIs("call_never", false)
		for _, id := range []string{"call_1", "call_2", "call_1"} { // reopening is idempotent
			if err := a.OpenToolCall(ctx, k, id); err != nil {
				t.Fatal(err)
			}
		}
		closeIs("call_1", true)
		closeIs("call_1", false)
		closeIs("call_2", true)
		closeIs("call_2", false)
		// Opened again after its close, it pairs again.
		if err := a.OpenToolCall(ctx, k, "call_1"); err != nil {
			t.Fatal(err)
		}
		closeIs("call_1", true)
		// An ended session still pairs the calls of emissions in flight.
		if err := a.OpenToolCall(ctx, k, "call_3"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.End(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		closeIs("call_3", true)
	})
}

func TestToolCallIDs(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, _ := open(sessions.Options{})
		k := key("tool-ids")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		for name, id := range map[string]string{
			"empty": "", "too long": strings.Repeat("x", sessions.MaxToolCallIDLen+1),
			"space": "call 1", "newline": "call\n1", "non-ascii": "cäll",
		} {
			if err := a.OpenToolCall(ctx, k, id); !errors.Is(err, sessions.ErrInvalidToolCallID) {
				t.Errorf("OpenToolCall(%s): %v; want ErrInvalidToolCallID", name, err)
			} else if id != "" && strings.Contains(err.Error(), id) {
				t.Errorf("OpenToolCall(%s) error echoes the id: %v", name, err)
			}
			if _, err := a.CloseToolCall(ctx, k, id); !errors.Is(err, sessions.ErrInvalidToolCallID) {
				t.Errorf("CloseToolCall(%s): %v; want ErrInvalidToolCallID", name, err)
			}
		}
		longest := strings.Repeat("~", sessions.MaxToolCallIDLen)
		if err := a.OpenToolCall(ctx, k, longest); err != nil {
			t.Fatalf("OpenToolCall(%d-byte id): %v", sessions.MaxToolCallIDLen, err)
		}
		if ok, err := a.CloseToolCall(ctx, k, longest); err != nil || !ok {
			t.Fatalf("CloseToolCall(%d-byte id) = %v, %v; want true", sessions.MaxToolCallIDLen, ok, err)
		}
	})
}

// TestToolCallLimit checks a session holds at most MaxOpenToolCalls open
// tool calls; closing one makes room again.
func TestToolCallLimit(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, _ := open(sessions.Options{})
		k := key("many-tools")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		for i := range sessions.MaxOpenToolCalls {
			if err := a.OpenToolCall(ctx, k, fmt.Sprintf("call_%d", i)); err != nil {
				t.Fatalf("OpenToolCall #%d: %v", i, err)
			}
		}
		if err := a.OpenToolCall(ctx, k, "call_0"); err != nil {
			t.Fatalf("reopening an open call at the limit: %v", err)
		}
		if err := a.OpenToolCall(ctx, k, "one_more"); !errors.Is(err, sessions.ErrTooManyToolCalls) {
			t.Fatalf("OpenToolCall beyond the limit: %v; want ErrTooManyToolCalls", err)
		}
		if ok, err := a.CloseToolCall(ctx, k, "call_0"); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if err := a.OpenToolCall(ctx, k, "one_more"); err != nil {
			t.Fatalf("OpenToolCall after a close: %v", err)
		}
	})
}

// TestCloseToolCallRace races many closes of each opened call on two
// replicas: exactly one close per call reports true.
func TestCloseToolCallRace(t *testing.T) {
	const calls = 20
	forEachStore(t, func(t *testing.T, open func(sessions.Options) (a, b sessions.Store)) {
		ctx := context.Background()
		a, b := open(sessions.Options{})
		k := key("racing-tools")
		if _, _, err := a.Begin(ctx, k, owner); err != nil {
			t.Fatal(err)
		}
		for i := range calls {
			if err := a.OpenToolCall(ctx, k, fmt.Sprintf("call_%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		closed := map[string]int{}
		race(16, a, b, func(s sessions.Store) {
			for i := range calls {
				id := fmt.Sprintf("call_%d", i)
				ok, err := s.CloseToolCall(ctx, k, id)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					closed[id]++
					mu.Unlock()
				}
			}
		})
		for i := range calls {
			if id := fmt.Sprintf("call_%d", i); closed[id] != 1 {
				t.Errorf("%s closed %d times; want exactly once", id, closed[id])
			}
		}
	})
}
