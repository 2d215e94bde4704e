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
// Errors name the JSON path of the offending value ($.a.b[3]) and never the
// value itself, because contexts carry untrusted and possibly sensitive data.
//
// Nothing here keeps state between calls. Functions that only read a tree
// (Check, Marshal, Equal, DeepCopy) may run concurrently on the same tree.
package jsonvalue

import (
	"errors"
	"strconv"
	"strings"
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
// offending value ("$" for the root); Detail explains the problem without
// quoting the value.
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
// unwinding; other errors pass through untouched.
func atKey(err error, key string) error {
	if pe, ok := err.(*PathError); ok {
		pe.rev = append(pe.rev, pathSeg{key: key})
	}
	return err
}

func atIndex(err error, i int) error {
	if pe, ok := err.(*PathError); ok {
		pe.rev = append(pe.rev, pathSeg{index: i, isIdx: true})
	}
	return err
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

// maxKeyInPath keeps error messages bounded when a key is huge.
const maxKeyInPath = 64

func writeSeg(b *strings.Builder, s pathSeg) {
	if s.isIdx {
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(s.index))
		b.WriteByte(']')
		return
	}
	if isPlainName(s.key) {
		b.WriteByte('.')
		b.WriteString(s.key)
		return
	}
	k := s.key
	suffix := ""
	if len(k) > maxKeyInPath {
		k, suffix = k[:maxKeyInPath], "..."
	}
	b.WriteByte('[')
	// QuoteToASCII also makes invalid UTF-8 keys printable.
	b.WriteString(strconv.QuoteToASCII(k))
	if suffix != "" {
		b.WriteString(suffix)
	}
	b.WriteByte(']')
}

// isPlainName reports whether key can be written in dot form; it uses the
// transform-path member-name alphabet so paths read like §5.2 paths.
func isPlainName(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
