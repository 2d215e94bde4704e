package membudget

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

func TestOpenRefusesBeyondTheBudget(t *testing.T) {
	b := New(100)
	a := b.Open(60)
	if a == nil {
		t.Fatal("the first account was refused")
	}
	if b.Open(41) != nil {
		t.Fatal("an account beyond the budget was admitted")
	}
	c := b.Open(40)
	if c == nil {
		t.Fatal("an account that fits was refused")
	}
	a.Close()
	a.Close() // idempotent
	c.Close()
	if got := b.InUse(); got != 0 {
		t.Fatalf("in use after closing every account: %d", got)
	}
}

func TestUseReservesOnlyBeyondWhatIsHeld(t *testing.T) {
	b := New(100)
	a := b.Open(30)
	if !a.Use(20) || b.InUse() != 30 {
		t.Fatalf("using less than held reserved more: in use %d", b.InUse())
	}
	if !a.Use(30) || b.InUse() != 50 {
		t.Fatalf("in use %d, want 50", b.InUse())
	}
	if a.Use(51) {
		t.Fatal("a use beyond the budget was accounted")
	}
	if b.InUse() != 50 || a.Held() != 50 {
		t.Fatalf("a refused use changed the reservation: in use %d, held %d", b.InUse(), a.Held())
	}
	a.Close()
	if b.InUse() != 0 {
		t.Fatalf("in use %d after close", b.InUse())
	}
}

func TestReaderFailsWhenTheBudgetRunsOut(t *testing.T) {
	b := New(1000)
	other := b.Open(900)
	a := b.Open(10)
	got, err := io.ReadAll(a.Reader(strings.NewReader(strings.Repeat("x", 500))))
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("err %v, want ErrExhausted", err)
	}
	if len(got) > 100 {
		t.Fatalf("read %d bytes past a budget leaving 100", len(got))
	}
	a.Close()
	other.Close()
	if b.InUse() != 0 {
		t.Fatalf("in use %d", b.InUse())
	}
	// With room, the reader passes everything through.
	a = b.Open(10)
	got, err = io.ReadAll(a.Reader(bytes.NewReader(make([]byte, 1000))))
	if err != nil || len(got) != 1000 {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	a.Close()
}

func TestConcurrentAccountsNeverOvershoot(t *testing.T) {
	const limit = 10_000
	b := New(limit)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				a := b.Open(100)
				if a == nil {
					continue
				}
				for a.Use(300) {
					if u := b.InUse(); u > limit {
						t.Errorf("in use %d over the limit %d", u, limit)
					}
				}
				a.Close()
			}
		}()
	}
	wg.Wait()
	if b.InUse() != 0 {
		t.Fatalf("in use %d after every account closed", b.InUse())
	}
}

func TestDefaultLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]string
		want   int64
		source string
	}{
		{"v2", map[string]string{"sys/fs/cgroup/memory.max": "1073741824\n"}, 256 << 20, "/sys/fs/cgroup/memory.max"},
		{"v2 unlimited, v1 set", map[string]string{"sys/fs/cgroup/memory.max": "max\n", "sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n"}, 128 << 20, "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"v1 unlimited", map[string]string{"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, FallbackLimit, ""},
		{"tiny limit", map[string]string{"sys/fs/cgroup/memory.max": "33554432"}, MinDerived, "/sys/fs/cgroup/memory.max"},
		{"none", nil, FallbackLimit, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			got, src := DefaultLimit(fsys)
			if got != tc.want || src != tc.source {
				t.Fatalf("DefaultLimit = %d from %q, want %d from %q", got, src, tc.want, tc.source)
			}
		})
	}
}
