package enforcement

import (
	"context"
	"reflect"
	"sync"
	"testing"
)

// seenInterceptor notes the identity of the context map it was given.
type seenInterceptor struct {
	mu   sync.Mutex
	maps []uintptr
}

func (s *seenInterceptor) Intercept(_ context.Context, c Context) (Verdict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maps = append(s.maps, reflect.ValueOf(map[string]any(c)).Pointer())
	return Allow(), nil
}

func (*seenInterceptor) NonBlocking() {}

type readerInterceptor struct{ seenInterceptor }

func (*readerInterceptor) ReadsOnly() {}

// TestReadsOnlySharesTheSnapshot: under every profile, read-only
// interceptors are handed one shared snapshot, any other interceptor a
// private copy of its own.
func TestReadsOnlySharesTheSnapshot(t *testing.T) {
	for _, profile := range []Profile{SequentialFirstDeny, SequentialRunAll, ParallelStrictest, ParallelUnanimous} {
		t.Run(string(profile), func(t *testing.T) {
			r1, r2 := &readerInterceptor{}, &readerInterceptor{}
			p1, p2 := &seenInterceptor{}, &seenInterceptor{}
			e := newTestEmitter(t, Options{
				Interceptors: []Registration{{Name: "r1", Interceptor: r1}, {Name: "p1", Interceptor: p1}, {Name: "r2", Interceptor: r2}, {Name: "p2", Interceptor: p2}},
				Composition:  Composition{Profile: profile},
			})
			out, err := e.Emit(context.Background(), buildAt(t, newTestBuilder(), Input))
			if err != nil || !out.Proceed {
				t.Fatalf("emit: %+v, %v", out, err)
			}
			if len(r1.maps) != 1 || len(r2.maps) != 1 || len(p1.maps) != 1 || len(p2.maps) != 1 {
				t.Fatalf("calls: %d %d %d %d", len(r1.maps), len(r2.maps), len(p1.maps), len(p2.maps))
			}
			if r1.maps[0] != r2.maps[0] {
				t.Errorf("read-only interceptors got different maps with no transform between them")
			}
			for _, p := range []*seenInterceptor{p1, p2} {
				if p.maps[0] == r1.maps[0] {
					t.Errorf("an interceptor that may write got the shared snapshot")
				}
			}
			if p1.maps[0] == p2.maps[0] {
				t.Errorf("two interceptors that may write share one copy")
			}
		})
	}
}
