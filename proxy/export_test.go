package proxy

import "testing"

// What the external test package (proxy_test) shares with this one.

// OneTrail is oneTrail, for the external test package.
type OneTrail = oneTrail

// NewOneTrail returns a OneTrail for the session named name.
func NewOneTrail(name string) *OneTrail { return &oneTrail{name: name} }

// Is is is, for the external test package.
func (o *oneTrail) Is(t *testing.T, trail string) bool {
	t.Helper()
	return o.is(t, trail)
}
