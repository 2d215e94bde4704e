package rawjson

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// MemberSet is the set of member names the gateway knows at one level of a
// document (the request's top level, a message, a choice, ...). It is built
// once and shared read-only.
type MemberSet map[string]struct{}

func NewMemberSet(names ...string) MemberSet {
	s := make(MemberSet, len(names))
	for _, n := range names {
		s[n] = struct{}{}
	}
	return s
}

// Has reports whether name is known exactly.
func (s MemberSet) Has(name string) bool {
	_, ok := s[name]
	return ok
}

// Collides reports whether name is not known exactly but equals a known
// name under Unicode case folding ("Content" beside "content", or alone).
// Go's encoding/json, and clients built on it, match member names
// case-insensitively, so such a member could be read as the known one by
// the receiver while the gateway judged something else.
func (s MemberSet) Collides(name string) bool {
	if s.Has(name) {
		return false
	}
	for k := range s {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// Ambiguous returns the index of the first member of ms whose name
// collides case-insensitively with a known one, or -1.
func (s MemberSet) Ambiguous(ms []Member) int {
	for i := range ms {
		if s.Collides(ms[i].Key) {
			return i
		}
	}
	return -1
}

// AmbiguousKeys is ambiguous for a decoded object.
func (s MemberSet) AmbiguousKeys(m map[string]any) bool {
	for k := range m {
		if s.Collides(k) {
			return true
		}
	}
	return false
}

// FoldsOnto returns the known name that name equals only under case
// folding, or "".
func (s MemberSet) FoldsOnto(name string) string {
	if !s.Collides(name) {
		return ""
	}
	var hit string
	for k := range s {
		if strings.EqualFold(k, name) && (hit == "" || k < hit) {
			hit = k
		}
	}
	return hit
}

// CollisionIn returns the known name that a member of obj equals only
// under case folding (the least such name, so errors are stable), or "".
func (s MemberSet) CollisionIn(obj map[string]any) string {
	var hit string
	for k := range obj {
		if known := s.FoldsOnto(k); known != "" && (hit == "" || known < hit) {
			hit = known
		}
	}
	return hit
}

// UnknownIn reports whether obj has a member that s does not know.
func (s MemberSet) UnknownIn(obj map[string]any) bool {
	for k := range obj {
		if !s.Has(k) {
			return true
		}
	}
	return false
}

// SortedNames lists a memberSet's names in order, for messages.
func (s MemberSet) SortedNames() []string {
	names := make([]string, 0, len(s))
	for k := range s {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// PlainName reports whether name may appear in an error or a wire
// allowance: an ASCII identifier (letters, digits, _ and -) of at most 64
// characters. Member names that are not plain are never quoted, since
// they could carry payload.
func PlainName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CheckExtra reports whether name may be allowed as an extra member beside
// the known ones of s (a deployment's wire allowance; side names the
// document, "request" or "response"): a plain identifier, so errors may
// name it, that is not known (the treatment of known members is fixed)
// and does not differ from a known one only in letter case (such members
// are refused as ambiguous).
func (s MemberSet) CheckExtra(name, side string) error {
	if !PlainName(name) {
		return errors.New("must be a plain identifier (ASCII letters, digits, _ and -, at most 64 characters)")
	}
	if s.Has(name) {
		return errors.New("is a known " + side + " member; the gateway's treatment of it is fixed")
	}
	if k := s.FoldsOnto(name); k != "" {
		return errors.New("differs from the known member " + strconv.Quote(k) + " only in letter case; such members are refused as ambiguous")
	}
	return nil
}
