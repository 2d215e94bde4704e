// Package membudget is the gateway-wide budget for buffered upstream
// bytes: every buffered response (an SSE stream read to its end, a JSON
// body read whole) reserves the bytes it holds from one Budget, so the
// sum of what all in-flight responses buffer never exceeds a bound set
// from the memory the process may use.
package membudget

import (
	"errors"
	"io"
	"sync/atomic"
)

// ErrExhausted is the error a Reader returns when the budget cannot cover
// the bytes it just read.
var ErrExhausted = errors.New("membudget: buffer budget exhausted")

// Budget is a bound on bytes buffered at once, shared by concurrent
// requests. It is safe for concurrent use; the zero value is not usable.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// New returns a budget of limit bytes (positive).
func New(limit int64) *Budget {
	return &Budget{limit: max(limit, 1)}
}

// Limit is the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// InUse is the number of bytes reserved now.
func (b *Budget) InUse() int64 { return b.used.Load() }

// reserve takes n bytes if they fit, all or nothing.
func (b *Budget) reserve(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// Open admits one response: it reserves first bytes, the least the
// response will buffer, and returns the account that holds them, or nil
// when the budget cannot cover them (the response must not start).
func (b *Budget) Open(first int64) *Account {
	if !b.reserve(first) {
		return nil
	}
	return &Account{b: b, held: first}
}

// Account is one response's reservation. Its methods are for one
// goroutine at a time; Close may be called any number of times.
type Account struct {
	b    *Budget
	held int64
	used int64 // bytes the response has buffered so far
}

// Use accounts n more buffered bytes, reserving beyond what the account
// holds when needed; it reports false, reserving nothing, when the budget
// cannot cover them.
func (a *Account) Use(n int64) bool {
	need := a.used + n - a.held
	if need > 0 {
		if !a.b.reserve(need) {
			return false
		}
		a.held += need
	}
	a.used += n
	return true
}

// Held is the number of bytes the account holds.
func (a *Account) Held() int64 { return a.held }

// Close returns everything the account holds to the budget.
func (a *Account) Close() {
	if a.held != 0 {
		a.b.used.Add(-a.held)
		a.held, a.used = 0, 0
	}
}

// Reader wraps r so that every byte read is first accounted in a: a read
// whose bytes the budget cannot cover fails with ErrExhausted (the bytes
// it read are withheld from the caller).
func (a *Account) Reader(r io.Reader) io.Reader { return &reader{r: r, a: a} }

type reader struct {
	r io.Reader
	a *Account
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 && !r.a.Use(int64(n)) {
		return 0, ErrExhausted
	}
	return n, err
}
