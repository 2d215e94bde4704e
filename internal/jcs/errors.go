package jcs

import (
	"errors"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/safepath"
)

// Sentinel errors. Every error returned by this package is an *Error that
// wraps exactly one of them, so callers can test with errors.Is. All of
// them describe a value that is outside the canonicalizable domain (or
// nested too deeply); upstream they all map to host_error:context_invalid.
var (
	// ErrIntegerRange: an integer-syntax number has magnitude above
	// 2^53-1 (spec §4.4, §10.2).
	ErrIntegerRange = errors.New("integer outside ±(2^53-1)")
	// ErrDepth: the value nests deeper than the permitted number of levels.
	ErrDepth = errors.New("nesting too deep")
	// ErrNonFinite: a number is NaN or ±Inf, or a number token overflows a
	// double.
	ErrNonFinite = errors.New("non-finite number")
	// ErrInvalidString: a string or object key is not valid UTF-8 (for
	// example an encoded lone surrogate), so it has no JSON representation.
	ErrInvalidString = errors.New("invalid UTF-8 string")
	// ErrInvalidNumber: a json.Number is not an RFC 8259 number token.
	ErrInvalidNumber = errors.New("invalid number token")
	// ErrUnsupportedType: the value tree holds a Go type that is not part
	// of the JSON value model.
	ErrUnsupportedType = errors.New("unsupported type")
)

// Error reports why a value cannot be canonicalized and where. The message
// names the JSON path and the violated constraint but never the offending
// value nor a member name the value chose, so it is safe to log and to
// return to a host.
type Error struct {
	err   error
	segs  []segment // innermost first; reversed when rendered
	key   bool      // the violation is in an object key of the value at the path
	limit int       // ErrDepth: the limit that was exceeded
	typ   string    // ErrUnsupportedType: the Go type name
}

// segment is one step of a JSON path: an object member with its rank among
// its object's names in byte order, or an array index.
type segment struct {
	key   string
	index int // the index, or the member's rank
	isKey bool
}

func newError(sentinel error) *Error { return &Error{err: sentinel} }

// inKey and atIndex record one path step while the error unwinds, so the
// success path never pays for path bookkeeping.
func (e *Error) inKey(k string, rank int) *Error {
	e.segs = append(e.segs, segment{key: k, index: rank, isKey: true})
	return e
}

func (e *Error) atIndex(i int) *Error {
	e.segs = append(e.segs, segment{index: i})
	return e
}

// Unwrap returns the sentinel error describing the failure class.
func (e *Error) Unwrap() error { return e.err }

// Path returns the location of the violation in the payload-free form of
// package safepath, such as `$.tool_call.args{member 2}` or
// `$.messages[2].content`: indices, the gateway's own member names, and
// "{member N}" (the rank among the object's names in byte order) for any
// other member. Very deep paths are elided in the middle.
func (e *Error) Path() string {
	const (
		maxSegs  = 32  // render at most this many steps ...
		keep     = 12  // ... as the first and last `keep` of them
		ellipsis = "…" // marks elision
	)
	var b strings.Builder
	b.WriteByte('$')
	n := len(e.segs)
	for i := 0; i < n; i++ {
		if n > maxSegs && i == keep {
			b.WriteString(ellipsis)
			i = n - keep - 1
			continue
		}
		s := e.segs[n-1-i]
		if s.isKey {
			safepath.WriteMember(&b, s.key, s.index)
		} else {
			safepath.WriteIndex(&b, s.index)
		}
	}
	return b.String()
}

// Error implements error.
func (e *Error) Error() string {
	p := e.Path()
	switch e.err {
	case ErrIntegerRange:
		return "jcs: integer at " + p + " exceeds ±(2^53-1) = ±9007199254740991; " +
			"string-encode 64-bit identifiers as decimal strings (spec §4.4)"
	case ErrDepth:
		return "jcs: value at " + p + " nests deeper than " + strconv.Itoa(e.limit) +
			" levels (spec §12.3)"
	case ErrNonFinite:
		return "jcs: number at " + p + " is not a finite double; " +
			"NaN and ±Infinity are not representable in JSON (spec §4.4)"
	case ErrInvalidString:
		what := "string"
		if e.key {
			what = "an object key of the value"
		}
		return "jcs: " + what + " at " + p + " is not valid UTF-8; " +
			"lone surrogates are not representable in JSON (spec §4.4)"
	case ErrInvalidNumber:
		return "jcs: json.Number at " + p + " is not a valid JSON number"
	case ErrUnsupportedType:
		return "jcs: unsupported type " + e.typ + " at " + p
	}
	return "jcs: " + e.err.Error() + " at " + p
}
