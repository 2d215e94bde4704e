package proxy

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// renderCounter is a wire.Request whose renderings are counted; its
// body names the first message's content, so a stale body shows.
type renderCounter struct {
	wire.Request
	renders, checks int
}

func (r *renderCounter) UpstreamBody(messages any) ([]byte, error) {
	r.renders++
	list, _ := messages.([]any)
	if len(list) == 0 {
		return nil, errors.New("no messages")
	}
	return []byte(list[0].(string)), nil
}

func (r *renderCounter) CheckMessages(target any) error {
	r.checks++
	_, err := (&renderCounter{}).UpstreamBody(target)
	return err
}

// bodyCounter is a renderCounter that is a wire.BodyChecker.
type bodyCounter struct{ renderCounter }

func (r *bodyCounter) CheckedBody(target any) ([]byte, error) { return r.UpstreamBody(target) }

// TestCheckedBodyReuse: the body the write-back check rendered is sent
// only for the very target it checked; any other target, even an equal
// one, is rendered afresh, and a request that is no BodyChecker is
// checked and rendered as before.
func TestCheckedBodyReuse(t *testing.T) {
	req := &bodyCounter{}
	c := &checkedBody{req: req}
	target := []any{"a", "b"}
	if err := c.check(target); err != nil {
		t.Fatal(err)
	}
	body, err := c.upstreamBody(target)
	if err != nil || string(body) != "a" || req.renders != 1 {
		t.Fatalf("same target: body %q err %v renders %d, want the checked body, one rendering", body, err, req.renders)
	}
	other := []any{"a", "b"}
	if body, err = c.upstreamBody(other); err != nil || string(body) != "a" || req.renders != 2 {
		t.Fatalf("equal copy: body %q err %v renders %d, want a second rendering", body, err, req.renders)
	}
	if body, err = c.upstreamBody(target[:1]); err != nil || string(body) != "a" || req.renders != 3 {
		t.Fatalf("shorter slice: renders %d, want a rendering", req.renders)
	}
	if body, err = c.upstreamBody(nil); err == nil || req.renders != 4 {
		t.Fatalf("nil: body %q err %v renders %d, want UpstreamBody's answer", body, err, req.renders)
	}
	if err := c.check([]any{}); err == nil {
		t.Fatal("check of an empty target: want UpstreamBody's error")
	}

	plain := &renderCounter{}
	pc := &checkedBody{req: plain}
	if err := pc.check(target); err != nil || plain.checks != 1 || plain.renders != 0 {
		t.Fatalf("plain request: err %v checks %d renders %d, want CheckMessages only", err, plain.checks, plain.renders)
	}
	if body, err := pc.upstreamBody(target); err != nil || !bytes.Equal(body, []byte("a")) || plain.renders != 1 {
		t.Fatalf("plain request: body %q renders %d, want one rendering", body, plain.renders)
	}
}
