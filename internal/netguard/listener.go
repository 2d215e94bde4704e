package netguard

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Pool is the share of the connection cap a connection was admitted to.
type Pool int

// Pools.
const (
	// Main connections serve any request.
	Main Pool = iota
	// Reserve connections were admitted beyond the main cap: they serve
	// the probe paths only, answer one request and close (see Reserved).
	Reserve
)

// ListenerOptions configures a Listener.
type ListenerOptions struct {
	// Max is the number of main connections open at once (positive).
	Max int
	// Reserve is how many connections beyond Max are admitted for probes.
	Reserve int
	// ReserveReadTimeout bounds all reading on a reserve connection, from
	// its accept: a client cannot hold a reserve slot by trickling its
	// headers. Zero leaves the server's own timeouts.
	ReserveReadTimeout time.Duration
	// Refused is called for each connection closed at accept because both
	// pools were full (may be nil).
	Refused func()
}

// Listener hands out at most Max main and Reserve reserve connections at
// once; a connection beyond both is closed as soon as it is accepted, so
// it costs a file descriptor for an instant only and the accept queue
// keeps moving (a probe behind it is not stuck in the backlog).
type Listener struct {
	net.Listener
	opts      ListenerOptions
	main, res atomic.Int64
}

// NewListener wraps ln.
func NewListener(ln net.Listener, opts ListenerOptions) *Listener {
	return &Listener{Listener: ln, opts: opts}
}

// Open returns the connections open in each pool.
func (l *Listener) Open() (main, reserve int) {
	return int(l.main.Load()), int(l.res.Load())
}

// Accept returns the next connection admitted to a pool.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.take(&l.main, l.opts.Max) {
			return &conn{Conn: c, l: l, pool: Main}, nil
		}
		if l.take(&l.res, l.opts.Reserve) {
			rc := &conn{Conn: c, l: l, pool: Reserve}
			if d := l.opts.ReserveReadTimeout; d > 0 {
				rc.readLimit = time.Now().Add(d)
				c.SetReadDeadline(rc.readLimit)
			}
			return rc, nil
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0) // reset: no FIN_WAIT state kept for a refused client
		}
		c.Close()
		if l.opts.Refused != nil {
			l.opts.Refused()
		}
	}
}

// take claims a slot of a pool of size n.
func (l *Listener) take(open *atomic.Int64, n int) bool {
	for {
		cur := open.Load()
		if cur >= int64(n) {
			return false
		}
		if open.CompareAndSwap(cur, cur+1) {
			return true
		}
	}
}

// conn gives its slot back when closed, once.
type conn struct {
	net.Conn
	l         *Listener
	pool      Pool
	readLimit time.Time // zero: none
	once      sync.Once
}

func (c *conn) Close() error {
	c.once.Do(func() {
		if c.pool == Main {
			c.l.main.Add(-1)
		} else {
			c.l.res.Add(-1)
		}
	})
	return c.Conn.Close()
}

// SetReadDeadline keeps a reserve connection's reads within its limit
// whatever the server asks for.
func (c *conn) SetReadDeadline(t time.Time) error {
	if !c.readLimit.IsZero() && (t.IsZero() || t.After(c.readLimit)) {
		t = c.readLimit
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *conn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

type poolKey struct{}

// ConnContext is an http.Server ConnContext: it notes the pool of a
// connection a Listener admitted, for Reserved.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if gc, ok := c.(*conn); ok && gc.pool == Reserve {
		return context.WithValue(ctx, poolKey{}, Reserve)
	}
	return ctx
}

// Reserved reports whether a request arrived on a reserve connection.
func Reserved(ctx context.Context) bool {
	p, _ := ctx.Value(poolKey{}).(Pool)
	return p == Reserve
}
