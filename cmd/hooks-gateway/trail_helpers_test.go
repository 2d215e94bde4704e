package main

import (
	"strings"

	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// memoryTrailName is the session name in trail, a trail id the memory
// store gives a session (<name>~<incarnation>, the incarnation
// sessions.IncarnationLen lowercase hex digits); ok is false when trail
// has no incarnation of that form.
func memoryTrailName(trail string) (name string, ok bool) {
	i := strings.LastIndexByte(trail, '~')
	if i <= 0 {
		return "", false
	}
	inc := trail[i+1:]
	if len(inc) != sessions.IncarnationLen || strings.Trim(inc, "0123456789abcdef") != "" {
		return "", false
	}
	return trail[:i], true
}
