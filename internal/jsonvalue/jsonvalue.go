// Package jsonvalue handles the JSON value trees that carry agent contexts,
// verdicts and CTK vectors through the gateway.
//
// A value tree is exactly what encoding/json produces with UseNumber:
// map[string]any, []any, string, json.Number, bool and nil. Numbers stay
// json.Number so that integer tokens beyond 2^53 (and beyond uint64) keep
// their exact bytes; nothing in this package turns a tree number into a
// float64.
//
// Spec §4.4 forbids non-finite numbers and lone surrogates in contexts and
// forbids silent normalization, so every entry point here rejects such values
// with an error instead of rewriting them the way encoding/json would.
// Errors name the JSON path of the offending value ($.messages[3]) and never
// the value itself, nor a member name the payload chose (safepath), because
// contexts carry untrusted and possibly sensitive data.
//
// Nothing here keeps state between calls. Functions that only read a tree
// (Check, Marshal, Equal, DeepCopy) may run concurrently on the same tree.
package jsonvalue

import (
	"errors"
	"maps"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/safepath"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, so callers can map failures to host_error:context_invalid (or a more
// specific class) with errors.Is.
var (
	// ErrSyntax reports input that is not exactly one JSON value.
	ErrSyntax = errors.New("invalid JSON")
	// ErrTooDeep reports a value nested deeper than the depth limit.
	ErrTooDeep = errors.New("nesting too deep")
	// ErrTooLarge reports a value whose compact encoding exceeds the size limit.
	ErrTooLarge = errors.New("value too large")
	// ErrNonFinite reports a NaN or infinite floating-point value.
	ErrNonFinite = errors.New("non-finite number")
	// ErrInvalidString reports a string or object key that is not valid
	// UTF-8, or JSON text containing a lone UTF-16 surrogate escape.
	ErrInvalidString = errors.New("invalid string")
	// ErrInvalidNumber reports a json.Number that is not a JSON number token.
	ErrInvalidNumber = errors.New("invalid number")
	// ErrUnsupportedType reports a Go value that has no JSON representation
	// (or, for the tree functions, is not a value-tree type).
	ErrUnsupportedType = errors.New("unsupported type")
)

// hardMaxDepth bounds every recursive walk even when the caller configured no
// depth limit: a cyclic map or slice would otherwise recurse until the Go
// runtime aborts the process, and §12.3 requires a deny, never a crash. It
// matches encoding/json's own decoder nesting limit, so every tree Decode can
// produce stays below it.
const hardMaxDepth = 10000

// PathError is the concrete error type returned for a problem located inside
// a value. Err is one of the package sentinels; Path is the JSON path of the
// offending value ("$" for the root) in the payload-free form of package
// safepath: array indices, the gateway's own member names, and "{member N}"
// (the member's rank among its object's names in byte order) for any name a
// payload chose; Detail explains the problem without quoting the value.
type PathError struct {
	Path   string
	Err    error
	Detail string

	// wrapped is an underlying error from user code (a failing MarshalJSON
	// method); reachable through errors.As but kept out of Error() because
	// its text may quote the value.
	wrapped error

	// rev collects path segments innermost-first while the error unwinds
	// out of a recursive walk; Path is rendered from it once, at the top,
	// so the success path never builds path strings.
	rev []pathSeg
}

// pathSeg is one step of a path: an array index, or an object member with
// its rank (-1 until known: the parser learns it once the input is read).
type pathSeg struct {
	key   string
	index int
	isIdx bool
}

// Error implements error.
func (e *PathError) Error() string {
	var b strings.Builder
	b.WriteString("jsonvalue: ")
	b.WriteString(e.Path)
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns the sentinel and, if there is one, the underlying error
// from user code.
func (e *PathError) Unwrap() []error {
	if e.wrapped != nil {
		return []error{e.Err, e.wrapped}
	}
	return []error{e.Err}
}

func newPathError(sentinel error, detail string) *PathError {
	return &PathError{Err: sentinel, Detail: detail}
}

// atKey and atIndex record one more (outer) path segment on an error that is
// unwinding; other errors pass through untouched. rank is the member's
// position among its object's names in byte order, -1 when not yet known.
func atKey(err error, key string, rank int) error {
	if pe, ok := err.(*PathError); ok {
		pe.rev = append(pe.rev, pathSeg{key: key, index: rank})
	}
	return err
}

func atIndex(err error, i int) error {
	if pe, ok := err.(*PathError); ok {
		pe.rev = append(pe.rev, pathSeg{index: i, isIdx: true})
	}
	return err
}

// rankIn is the rank of key among the names of m (safepath.Rank).
func rankIn[V any](m map[string]V, key string) int {
	return safepath.Rank(maps.Keys(m), key)
}

// resolveRanks fills in the ranks the parser could not know, walking the
// path down root, the tree decoded from the same input.
func (e *PathError) resolveRanks(root any) {
	v := root
	for i := len(e.rev) - 1; i >= 0; i-- {
		s := &e.rev[i]
		switch c := v.(type) {
		case map[string]any:
			if !s.isIdx {
				if s.index < 0 {
					s.index = rankIn(c, s.key)
				}
				v = c[s.key]
				continue
			}
		case []any:
			if s.isIdx && s.index < len(c) {
				v = c[s.index]
				continue
			}
		}
		v = nil
	}
}

// finish renders the collected path, prefixed by base (normally "$").
func finish(err error, base string) error {
	pe, ok := err.(*PathError)
	if !ok {
		return err
	}
	var b strings.Builder
	b.WriteString(base)
	for i := len(pe.rev) - 1; i >= 0; i-- {
		// A deep path keeps its outer and inner ends, so the message
		// stays short enough that the problem after it is not cut off.
		if n := len(pe.rev); n > maxSegsInPath && i == n-1-maxSegsInPath/2 {
			b.WriteString("…")
			i = maxSegsInPath / 2
		}
		writeSeg(&b, pe.rev[i])
	}
	pe.Path = b.String()
	pe.rev = nil
	return pe
}

// maxSegsInPath keeps error messages bounded when a path is deep.
const maxSegsInPath = 16

func writeSeg(b *strings.Builder, s pathSeg) {
	if s.isIdx {
		safepath.WriteIndex(b, s.index)
		return
	}
	safepath.WriteMember(b, s.key, s.index)
}
