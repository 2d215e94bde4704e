// Package jcs implements RFC 8785, the JSON Canonicalization Scheme, over
// in-memory JSON value trees, and the jcs-sha256 context identity of
// AGENT-HOOKS-0.1 §10.2 with its input-domain checks (§4.4).
//
// A value tree is what encoding/json produces with Decoder.UseNumber:
// map[string]any, []any, string, json.Number, bool and nil. float64 and
// the built-in integer types are accepted as well. The Go type decides the
// JSON type: a nil []any is [] and a nil map[string]any is {}, never null
// (encoding/json would write null).
package jcs

// Why a tree walker rather than github.com/gowebpki/jcs v1.0.2: its
// Transform canonicalizes JSON text, so a tree must be marshaled and then
// parsed again. It does reproduce every golden canonical_json (G-15 with
// the same correctly rounded result as here) and serves as the test
// oracle, but on a 64 KiB context json.Marshal+Transform costs 3.97 ms CPU
// and 23,682 allocations per op against 0.37 ms and 1 allocation for
// Canonicalize and 0.26 ms and 1 for SHA256Identity: 9-13x and 14-18x
// slower from 1 KiB to 1 MiB (bench_test.go, median of 16 round-robin
// runs, go1.26, 2 shared cores). The walker also sees json.Number tokens,
// which the integer-domain check needs.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"iter"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/hooks-gateway/hooks-gateway/internal/safepath"
)

// DefaultMaxDepth is the spec's recommended nesting bound for the identity
// path (§12.3). The root value is level 1 and every array element or
// object member value is one level below its container, scalars included.
const DefaultMaxDepth = 128

// maxNesting bounds recursion where the caller sets no depth limit
// (Append, Canonicalize, CheckIntegerDomain). It only guards against
// cyclic or absurdly deep trees overflowing the stack; it matches the
// nesting limit of encoding/json's decoder.
const maxNesting = 10000

const (
	// flushSize is the buffered canonical output at which the identity
	// path hands bytes to the hash, keeping the buffer small and hot.
	flushSize = 32 << 10
	// Pooled encoders drop scratch space beyond these sizes, so one huge
	// value does not pin memory for the life of the pool.
	maxPooledBuf     = 4 << 20
	maxPooledMembers = 1 << 14
)

// Append appends the RFC 8785 canonical serialization of v to dst.
//
// No integer-domain check is made: an integer-syntax token beyond
// ±(2^53-1) is serialized as the double it rounds to, as any RFC 8785
// implementation does; use CheckIntegerDomain or SHA256Identity to reject
// it. Nesting is limited only as a guard against cyclic values. On error,
// dst is returned unchanged in length together with an *Error.
func Append(dst []byte, v any) ([]byte, error) {
	e := getEncoder(maxNesting, false)
	defer putEncoder(e)
	pooled := e.buf
	e.buf = dst
	err := e.encode(v, 1)
	out := e.buf
	e.buf = pooled
	if err != nil {
		return dst, err
	}
	return out, nil
}

// Canonicalize returns the canonical bytes of v. See Append.
func Canonicalize(v any) ([]byte, error) {
	e := getEncoder(maxNesting, false)
	defer putEncoder(e)
	if err := e.encode(v, 1); err != nil {
		return nil, err
	}
	// Build in the reused buffer and copy out once at the exact size,
	// instead of growing a fresh slice by repeated doubling.
	return bytes.Clone(e.buf), nil
}

// SHA256Identity returns the jcs-sha256 identity of v: "sha256:" followed
// by the lowercase hex SHA-256 of Canonicalize(v). It fails, returning an
// *Error, if v nests deeper than maxDepth levels (the root is level 1;
// maxDepth <= 0 selects DefaultMaxDepth), if CheckIntegerDomain would
// reject v, or if v cannot be canonicalized. The first violation in
// canonical order is reported.
//
// v is expected to be the identity projection of a context; projecting is
// the caller's job. Checking, depth limiting, serializing and hashing
// happen in a single walk that streams into the hash through a pooled
// buffer.
func SHA256Identity(v any, maxDepth int) (string, error) {
	var out [SHA256IdentitySize]byte
	if err := SHA256IdentityInto(&out, v, maxDepth); err != nil {
		return "", err
	}
	return string(out[:]), nil
}

// SHA256IdentitySize is the length of a jcs-sha256 identity: "sha256:"
// and 64 hex digits.
const SHA256IdentitySize = len(sha256Prefix) + 2*sha256.Size

const sha256Prefix = "sha256:"

// SHA256IdentityInto is SHA256Identity writing the identity's text into
// *dst, for a caller that keeps it in storage of its own. On error *dst
// is left as it was.
func SHA256IdentityInto(dst *[SHA256IdentitySize]byte, v any, maxDepth int) error {
	e := getEncoder(0, true)
	defer putEncoder(e)
	return e.identityInto(dst, v, maxDepth)
}

// identityInto is SHA256IdentityInto on encoder e.
func (e *encoder) identityInto(dst *[SHA256IdentitySize]byte, v any, maxDepth int) error {
	return e.identityTrailInto(dst, v, maxDepth, nil)
}

// identityTrailInto is identityInto resuming from trail t (nil: none),
// which it leaves for the next walk, or empties when the walk fails.
func (e *encoder) identityTrailInto(dst *[SHA256IdentitySize]byte, v any, maxDepth int, t *Trail) error {
	if e.hash == nil {
		e.hash = sha256.New()
	} else {
		e.hash.Reset()
	}
	e.startTrail(t)
	if err := e.hashWalk(e.hash, v, maxDepth); err != nil {
		if e.trail != nil {
			e.trail.reset()
			e.trail = nil
		}
		return err
	}
	if e.trail != nil {
		e.endTrail()
	}
	sum := e.hash.Sum(e.sum[:0])
	copy(dst[:], sha256Prefix)
	hex.Encode(dst[len(sha256Prefix):], sum)
	return nil
}

// HashCanonical writes the canonical bytes of v to h under the same checks
// as SHA256Identity, in one walk and without materializing the bytes. It
// serves identity providers built on other hashes (an HMAC, say). On error
// h may have received part of the bytes and must be discarded.
func HashCanonical(h hash.Hash, v any, maxDepth int) error {
	e := getEncoder(0, true)
	defer putEncoder(e)
	if err := e.hashWalk(h, v, maxDepth); err != nil {
		return err
	}
	return nil
}

// hashWalk runs the identity-path walk of v into h.
func (e *encoder) hashWalk(h hash.Hash, v any, maxDepth int) *Error {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	e.maxDepth = maxDepth
	e.sink = h
	if err := e.encode(v, 1); err != nil {
		return err
	}
	e.flush()
	return nil
}

// CheckIntegerDomain reports an error if any integer-syntax number in v (a
// json.Number without '.', 'e' or 'E', or a Go integer) has magnitude
// above 2^53-1 = 9007199254740991, however large the token (tokens beyond
// the uint64 range included). Float-syntax tokens and float64 values are
// never range-checked: they denote doubles.
//
// The *Error wraps ErrIntegerRange, names the JSON path of the first
// offending number in canonical order (for example $.tool_call.args.id)
// and never its value, and tells the host to string-encode 64-bit
// identifiers (spec §4.4). A json.Number that is not a JSON number yields
// ErrInvalidNumber, and a cyclic or absurdly deep value ErrDepth; other
// value-domain problems are left to Canonicalize.
func CheckIntegerDomain(v any) error {
	if err := checkDomain(v, 1); err != nil {
		return err
	}
	return nil
}

// checkDomain walks v in map order without sorting: the common case (no
// violation) pays nothing for order. To keep the reported path
// deterministic anyway, an object with a violation reports the one under
// its smallest key in canonical order, and keys that cannot beat the best
// so far are skipped.
func checkDomain(v any, depth int) *Error {
	if depth > maxNesting {
		return &Error{err: ErrDepth, limit: maxNesting}
	}
	switch x := v.(type) {
	case map[string]any:
		var best *Error
		var bestKey string
		for k, el := range x {
			if best != nil && compareKeys(k, bestKey) >= 0 {
				continue
			}
			if err := checkDomain(el, depth+1); err != nil {
				best, bestKey = err, k
			}
		}
		if best != nil {
			return best.inKey(bestKey, safepath.Rank(maps.Keys(x), bestKey))
		}
	case *Object:
		if x != nil {
			return checkDomain(*x, depth)
		}
	case Object:
		var best *Error
		var bestKey string
		for _, m := range x {
			if best != nil && compareKeys(m.Key, bestKey) >= 0 {
				continue
			}
			if err := checkDomain(m.Value, depth+1); err != nil {
				best, bestKey = err, m.Key
			}
		}
		if best != nil {
			return best.inKey(bestKey, safepath.Rank(x.keys(), bestKey))
		}
	case []any:
		for i, el := range x {
			if err := checkDomain(el, depth+1); err != nil {
				return err.atIndex(i)
			}
		}
	case json.Number:
		switch scanNumber(string(x)) {
		case tokenInvalid:
			return newError(ErrInvalidNumber)
		case tokenInt:
			if intTokenUnsafe(string(x)) {
				return newError(ErrIntegerRange)
			}
		}
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		if _, safe := safeInt(x); !safe {
			return newError(ErrIntegerRange)
		}
	}
	return nil
}

// member is one object member awaiting output in sorted order.
type member struct {
	key string
	val any
}

// encoder holds the state of one walk. Encoders are pooled; a walk's
// settings are reset by getEncoder.
type encoder struct {
	buf       []byte
	members   []member // stack of members of the objects being written
	maxDepth  int
	checkInts bool      // reject integer-syntax numbers beyond ±(2^53-1)
	sink      hash.Hash // if set, buf is flushed into it as it fills
	hash      hash.Hash // reusable SHA-256 state
	sum       [sha256.Size]byte
	memo      Memo // objects' canonical bytes made before (identity path only)

	// A walk resuming from a trail (trail.go): its pieces so far matched
	// the trail's first matched ones while matching, it records what it
	// hashes while recording, and since bytes were hashed after the last
	// saved state.
	trail     *Trail
	matched   int
	matching  bool
	recording bool
	since     int
	// An encoder making a Canonical with a memo records in shares where
	// it wrote memo bytes (in order), so that a walk with a trail can
	// write them as shared pieces.
	recordShares bool
	shares       []share
}

var encoders = sync.Pool{New: func() any { return new(encoder) }}

func getEncoder(maxDepth int, checkInts bool) *encoder {
	e := encoders.Get().(*encoder)
	e.buf = e.buf[:0]
	e.maxDepth = maxDepth
	e.checkInts = checkInts
	e.sink = nil
	e.memo = nil
	e.trail = nil
	e.recordShares = false
	clear(e.shares)
	e.shares = e.shares[:0]
	return e
}

func putEncoder(e *encoder) {
	if cap(e.buf) > maxPooledBuf {
		e.buf = nil
	}
	if cap(e.members) > maxPooledMembers {
		e.members = nil
	}
	e.sink = nil
	e.memo = nil
	e.trail = nil
	e.recordShares = false
	clear(e.shares) // do not let the pool pin memo bytes
	e.shares = e.shares[:0]
	encoders.Put(e)
}

// flush hands the buffered bytes to the sink. It is kept out of line so
// that maybeFlush, which runs per value, stays inlinable.
//
//go:noinline
func (e *encoder) flush() {
	if e.sink != nil {
		if e.trail != nil {
			e.piece(e.buf, false)
		} else {
			e.sink.Write(e.buf) // hash.Hash.Write never fails
		}
		e.buf = e.buf[:0]
	}
}

// encode appends the canonical form of v, which sits at nesting level
// depth, to e.buf.
func (e *encoder) encode(v any, depth int) *Error {
	if depth > e.maxDepth {
		return &Error{err: ErrDepth, limit: e.maxDepth}
	}
	switch x := v.(type) {
	case string:
		var ok bool
		if e.buf, ok = appendString(e.buf, x); !ok {
			return newError(ErrInvalidString)
		}
	case map[string]any:
		return e.object(x, depth)
	case Object:
		return e.objectMembers(x, depth)
	case *Object:
		if x == nil {
			return e.objectMembers(nil, depth)
		}
		return e.objectMembers(*x, depth)
	case *Canonical:
		if x == nil || x.bytes == nil {
			return &Error{err: ErrUnsupportedType, typ: "unencoded *jcs.Canonical"}
		}
		e.writeCanonicalOf(x)
	case []any:
		return e.array(x, depth)
	case json.Number:
		var err error
		if e.buf, err = appendNumberToken(e.buf, string(x), e.checkInts); err != nil {
			return newError(err)
		}
	case bool:
		if x {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case nil:
		e.buf = append(e.buf, "null"...)
	case float64:
		var err error
		if e.buf, err = appendFloat(e.buf, x); err != nil {
			return newError(err)
		}
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		f, safe := safeInt(x)
		if !safe && e.checkInts {
			return newError(ErrIntegerRange)
		}
		e.buf, _ = appendFloat(e.buf, f) // finite: |f| <= 2^64
	default:
		return &Error{err: ErrUnsupportedType, typ: reflect.TypeOf(v).String()}
	}
	e.maybeFlush()
	return nil
}

// maybeFlush hands the buffer to the sink once it has filled up.
func (e *encoder) maybeFlush() {
	if e.sink != nil && len(e.buf) >= flushSize {
		e.flush()
	}
}

func (e *encoder) array(a []any, depth int) *Error {
	e.buf = append(e.buf, '[')
	for i, el := range a {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.encode(el, depth+1); err != nil {
			return err.atIndex(i)
		}
	}
	e.buf = append(e.buf, ']')
	e.maybeFlush()
	return nil
}

func (e *encoder) object(m map[string]any, depth int) *Error {
	if e.memo != nil {
		if handled, err := e.memoObject(m, depth); handled {
			return err
		}
	}
	return e.plainObject(m, depth)
}

// plainObject writes m by walking its members.
func (e *encoder) plainObject(m map[string]any, depth int) *Error {
	// Members are staged on a shared stack: nested objects push above
	// base and pop back to it before this frame continues, and ms stays
	// valid even if a nested push reallocates the stack.
	base := len(e.members)
	defer func() {
		clear(e.members[base:]) // do not let the pool pin caller values
		e.members = e.members[:base]
	}()
	for k, v := range m {
		e.members = append(e.members, member{k, v})
	}
	return e.sortedObject(base, depth)
}

// objectMembers writes an Object: staged and sorted like a map's members.
func (e *encoder) objectMembers(o Object, depth int) *Error {
	base := len(e.members)
	defer func() {
		clear(e.members[base:])
		e.members = e.members[:base]
	}()
	for _, m := range o {
		e.members = append(e.members, member{m.Key, m.Value})
	}
	return e.sortedObject(base, depth)
}

// sortedObject sorts the members staged above base and writes them as an
// object.
func (e *encoder) sortedObject(base, depth int) *Error {
	ms := e.members[base:]
	// compareKeys is a total order on all byte strings, so the output, and
	// which invalid key or value is reported first, never depends on map
	// iteration order.
	slices.SortFunc(ms, func(a, b member) int { return compareKeys(a.key, b.key) })
	e.buf = append(e.buf, '{')
	for i := range ms {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		var ok bool
		if e.buf, ok = appendString(e.buf, ms[i].key); !ok {
			return &Error{err: ErrInvalidString, key: true}
		}
		e.buf = append(e.buf, ':')
		if err := e.encode(ms[i].val, depth+1); err != nil {
			return err.inKey(ms[i].key, safepath.Rank(memberKeys(ms), ms[i].key))
		}
	}
	e.buf = append(e.buf, '}')
	e.maybeFlush()
	return nil
}

// safeInt converts a Go integer to float64 (correctly rounded) and reports
// whether its magnitude is within 2^53-1, where the conversion is exact.
func safeInt(v any) (float64, bool) {
	var i int64
	switch x := v.(type) {
	case int:
		i = int64(x)
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	case uint8:
		i = int64(x)
	case uint16:
		i = int64(x)
	case uint32:
		i = int64(x)
	case uint:
		return float64(x), uint64(x) <= MaxSafeInteger
	case uint64:
		return float64(x), x <= MaxSafeInteger
	}
	return float64(i), -MaxSafeInteger <= i && i <= MaxSafeInteger
}

// keys yields the member names of o, for error paths.
func (o Object) keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, m := range o {
			if !yield(m.Key) {
				return
			}
		}
	}
}

// memberKeys yields the names of staged members, for error paths.
func memberKeys(ms []member) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, m := range ms {
			if !yield(m.key) {
				return
			}
		}
	}
}
