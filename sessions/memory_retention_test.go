package sessions_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/heaptest"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// TestMemoryDoesNotRetainCallersStrings pins that Memory copies every
// string it keeps. The gateway's parsed requests hold strings that slice
// one conversion of the whole body (jsonvalue.Text); a session outliving
// the request must not keep that body alive through an id it stored.
// Each case hands the store short strings sliced from a fresh 16 MiB
// document and checks that, once the caller drops the document, the
// store does not keep it live.
func TestMemoryDoesNotRetainCallersStrings(t *testing.T) {
	ctx := context.Background()
	owner := sessions.Owner{KeyID: "k", AgentID: "a"}
	cases := []struct {
		name  string
		store func(m *sessions.Memory, doc string) error
	}{
		{"session id", func(m *sessions.Memory, doc string) error {
			_, _, err := m.Begin(ctx, sessions.Key{ID: doc[:8]}, owner)
			return err
		}},
		{"tenant", func(m *sessions.Memory, doc string) error {
			_, _, err := m.Begin(ctx, sessions.Key{Tenant: doc[:8], ID: "s"}, owner)
			return err
		}},
		{"owner key id", func(m *sessions.Memory, doc string) error {
			_, _, err := m.Begin(ctx, sessions.Key{ID: "s"}, sessions.Owner{KeyID: doc[:8], AgentID: "a"})
			return err
		}},
		{"owner agent id", func(m *sessions.Memory, doc string) error {
			_, _, err := m.Begin(ctx, sessions.Key{ID: "s"}, sessions.Owner{KeyID: "k", AgentID: doc[:8]})
			return err
		}},
		{"BeginCall lease", func(m *sessions.Memory, doc string) error {
			_, err := m.BeginCall(ctx, sessions.Key{ID: "s"}, owner, sessions.Call{ID: doc[:8], Lease: time.Hour})
			return err
		}},
		{"Acquire lease", func(m *sessions.Memory, doc string) error {
			if _, _, err := m.Begin(ctx, sessions.Key{ID: "s"}, owner); err != nil {
				return err
			}
			return m.Acquire(ctx, sessions.Key{ID: "s"}, doc[:8], time.Hour)
		}},
		{"renewed lease", func(m *sessions.Memory, doc string) error {
			if _, _, err := m.Begin(ctx, sessions.Key{ID: "s"}, owner); err != nil {
				return err
			}
			if err := m.Acquire(ctx, sessions.Key{ID: "s"}, "id-xxxxx", time.Hour); err != nil {
				return err
			}
			// Assigning to a map's existing string key stores the new
			// key string too.
			return m.Acquire(ctx, sessions.Key{ID: "s"}, doc[:8], 2*time.Hour)
		}},
		{"open tool call", func(m *sessions.Memory, doc string) error {
			if _, _, err := m.Begin(ctx, sessions.Key{ID: "s"}, owner); err != nil {
				return err
			}
			return m.OpenToolCall(ctx, sessions.Key{ID: "s"}, doc[:8])
		}},
		{"counter key", func(m *sessions.Memory, doc string) error {
			_, _, err := m.ReserveCounter(ctx, doc[:8], time.Hour, 1, 10)
			return err
		}},
	}
	const size = 16 << 20
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := sessions.NewMemory(sessions.Options{})
			before := heaptest.Live()
			if err := c.store(m, "id-"+strings.Repeat("x", size)); err != nil {
				t.Fatal(err)
			}
			if live := heaptest.Live() - before; live > size/2 {
				t.Errorf("after storing an 8-byte slice of a %d MiB string, %d MiB stay live: the store keeps the whole string", size>>20, live>>20)
			}
			runtime.KeepAlive(m)
		})
	}
}
