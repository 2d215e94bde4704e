package chatwire

import "strings"

// memberSet is the set of member names the gateway knows at one level of a
// document (the request's top level, a message, a choice, ...). It is built
// once and shared read-only.
type memberSet map[string]struct{}

func newMemberSet(names ...string) memberSet {
	s := make(memberSet, len(names))
	for _, n := range names {
		s[n] = struct{}{}
	}
	return s
}

// has reports whether name is known exactly.
func (s memberSet) has(name string) bool {
	_, ok := s[name]
	return ok
}

// collides reports whether name is not known exactly but equals a known
// name under Unicode case folding ("Content" beside "content", or alone).
// Go's encoding/json, and clients built on it, match member names
// case-insensitively, so such a member could be read as the known one by
// the receiver while the gateway judged something else.
func (s memberSet) collides(name string) bool {
	if s.has(name) {
		return false
	}
	for k := range s {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// ambiguous returns the index of the first member of ms whose name
// collides case-insensitively with a known one, or -1.
func (s memberSet) ambiguous(ms []member) int {
	for i := range ms {
		if s.collides(ms[i].key) {
			return i
		}
	}
	return -1
}

// ambiguousKeys is ambiguous for a decoded object.
func (s memberSet) ambiguousKeys(m map[string]any) bool {
	for k := range m {
		if s.collides(k) {
			return true
		}
	}
	return false
}
