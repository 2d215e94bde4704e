package enforcement

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCallBoundedDiscardsLateAnswers: an answer produced after the deadline
// is a timeout, whichever of the answer and the deadline's cancellation
// reaches the emitter first (under load the timer's cancel can lag behind).
func TestCallBoundedDiscardsLateAnswers(t *testing.T) {
	const timeout = 2 * time.Millisecond
	late := func(context.Context) (int, error) {
		time.Sleep(timeout + timeout/2) // ignores its context, answers late
		return 1, nil
	}
	var accepted atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 400; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := callBounded(context.Background(), timeout, late); !errors.Is(err, errTimeout) {
				accepted.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := accepted.Load(); n > 0 {
		t.Fatalf("%d of 400 late answers accepted", n)
	}
}

// TestCallBoundedClassification: each way a bounded call can end maps to
// the error the §6.3 mapping relies on.
func TestCallBoundedClassification(t *testing.T) {
	// Calls that must time out use a short bound; calls that must finish
	// in time get a generous one, so a loaded CI machine's scheduling
	// delay cannot turn them into timeouts.
	const timeout, ample = 20 * time.Millisecond, 10 * time.Second
	boom := errors.New("boom")
	cases := []struct {
		name    string
		timeout time.Duration
		cancel  bool // cancel the caller's context once fn starts
		fn      func(context.Context) (int, error)
		want    int
		is      []error
		not     []error
	}{
		{"on-time", ample, false, func(context.Context) (int, error) { return 7, nil }, 7, nil, nil},
		{"on-time-error", ample, false, func(context.Context) (int, error) { return 0, boom }, 0, []error{boom}, []error{errTimeout}},
		{"panic", ample, false, func(context.Context) (int, error) { panic("x") }, 0, []error{errPanic}, []error{errTimeout}},
		{"late-error", timeout, false, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }, 0, []error{errTimeout}, nil},
		{"blocked", timeout, false, func(context.Context) (int, error) { time.Sleep(3 * timeout); return 1, nil }, 0, []error{errTimeout}, nil},
		{"caller-cancel", ample, true, func(ctx context.Context) (int, error) { <-ctx.Done(); return 1, nil }, 0, []error{context.Canceled}, []error{errTimeout}},
		{"unbounded", -1, false, func(ctx context.Context) (int, error) {
			if _, ok := ctx.Deadline(); ok {
				return 0, boom
			}
			return 3, nil
		}, 3, nil, nil},
		{"unbounded-panic", -1, false, func(context.Context) (int, error) { panic("x") }, 0, []error{errPanic}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fn := tc.fn
			if tc.cancel {
				fn = func(c context.Context) (int, error) { cancel(); return tc.fn(c) }
			}
			v, err := callBounded(ctx, tc.timeout, fn)
			if v != tc.want {
				t.Errorf("value %d, want %d", v, tc.want)
			}
			if len(tc.is) == 0 && err != nil {
				t.Errorf("err %v, want nil", err)
			}
			for _, e := range tc.is {
				if !errors.Is(err, e) {
					t.Errorf("err %v, want %v", err, e)
				}
			}
			for _, e := range tc.not {
				if errors.Is(err, e) {
					t.Errorf("err %v must not be %v", err, e)
				}
			}
		})
	}
}
