package providers

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// dripBody is a /drip stream's body: the rendered bytes, paused for the
// interval at each break (the start of every text delta after the first),
// as a model generating word by word would deliver them. ctx's end or
// Close ends a pause early with an error, so a caller that cancels the
// upstream mid-stream is not kept waiting.
type dripBody struct {
	ctx      context.Context
	body     []byte
	breaks   []int // offsets still ahead, ascending
	interval time.Duration
	off      int

	once   sync.Once
	closed chan struct{}
}

func newDripBody(ctx context.Context, body []byte, breaks []int, interval time.Duration) *dripBody {
	return &dripBody{ctx: ctx, body: body, breaks: breaks, interval: interval, closed: make(chan struct{})}
}

// Read returns bytes up to the next break; at a break it first waits the
// interval.
func (d *dripBody) Read(p []byte) (int, error) {
	if err := d.stopped(); err != nil {
		return 0, err
	}
	if d.off >= len(d.body) {
		return 0, io.EOF
	}
	if len(d.breaks) > 0 && d.off == d.breaks[0] {
		d.breaks = d.breaks[1:]
		t := time.NewTimer(d.interval)
		defer t.Stop()
		select {
		case <-t.C:
		case <-d.ctx.Done():
			return 0, d.ctx.Err()
		case <-d.closed:
			return 0, http.ErrBodyReadAfterClose
		}
	}
	end := len(d.body)
	if len(d.breaks) > 0 {
		end = d.breaks[0]
	}
	n := copy(p, d.body[d.off:end])
	d.off += n
	return n, nil
}

// stopped reports why no more can be read, if so.
func (d *dripBody) stopped() error {
	select {
	case <-d.closed:
		return http.ErrBodyReadAfterClose
	default:
		return d.ctx.Err()
	}
}

// Close ends the body and any pause in progress; it may be called
// concurrently with Read.
func (d *dripBody) Close() error {
	d.once.Do(func() { close(d.closed) })
	return nil
}
