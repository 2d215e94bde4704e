package proxy_test

import (
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// memoryTrail reports whether trail is the trail id the memory store gives
// the session named name: name, "~" and sessions.IncarnationLen lowercase
// hex digits.
func memoryTrail(trail, name string) bool {
	inc, ok := strings.CutPrefix(trail, name+"~")
	return ok && len(inc) == sessions.IncarnationLen && strings.Trim(inc, "0123456789abcdef") == ""
}

// oneTrail checks that the trail ids it is shown for the session named
// name are one memory-store trail id (memoryTrail), and keeps it.
type oneTrail struct {
	name, id string
}

// is reports whether trail names o's session; a second trail id of it is
// an error.
func (o *oneTrail) is(t *testing.T, trail string) bool {
	t.Helper()
	if !memoryTrail(trail, o.name) {
		return false
	}
	if o.id == "" {
		o.id = trail
	} else if trail != o.id {
		t.Errorf("session %s under two trail ids: %s and %s", o.name, o.id, trail)
	}
	return true
}
