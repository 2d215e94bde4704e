package jcs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	gowebpki "github.com/gowebpki/jcs"
)

// Differential fuzzing against github.com/gowebpki/jcs (Transform of
// json.Marshal output). Where the two legitimately differ:
//
//   - Integer tokens beyond ±(2^53-1): none for Canonicalize, which, like
//     Transform, prints the double they round to; SHA256Identity and
//     CheckIntegerDomain reject them and Transform has no such check, so
//     the identity is compared only when our domain check passes, and the
//     check itself is compared with a math/big reference.
//   - Go strings that are not valid UTF-8: json.Marshal silently turns
//     them into U+FFFD, we reject them (ErrInvalidString). Decoded trees
//     never contain them; FuzzStrings builds them directly.
//   - Nesting: we count every value level (scalars included, as the
//     identity depth rule does) up to maxNesting, Transform counts
//     containers; inputs failing with ErrDepth are skipped.
//
// Everything else must match byte for byte, and a number token that
// overflows a double must fail on both sides.

var fuzzDocs = []string{
	`{"b":1,"a":[true,false,null,"s"]}`,
	`{"\ue000":2,"\ud800\udc00":3,"z":4,"":1,"é":5}`,
	`{"n":[0,-0,1.0,56.0,-0.0,1e21,1e-6,1e-7,333333333.3333333,0.1,3.141592653589793,9.999999999999997e+22]}`,
	`[9007199254740991,-9007199254740991,9007199254740992,18446744073709551616,1e400,1e-400]`,
	`{"s":"line1\nline2\t\"q\"\\end \u0000\u001f\u007f / <>& \u2028\u2029 h\u00e9llo \ud83c\udf0d"}`,
	`"\ud800"`,
	`[[[[[[[[[[[[[[[[{"deep":{"er":[1,{"x":2}]}}]]]]]]]]]]]]]]]`,
	`{"tool_call":{"args":{"id":9007199254740992}}}`,
	`123456789012345678901234567890`,
	`-0.0000033333333333333333`,
}

func FuzzCanonicalizeJSON(f *testing.F) {
	for _, d := range fuzzDocs {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return
		}
		ours, err := Canonicalize(v)
		marshaled, merr := json.Marshal(v)
		if merr != nil {
			t.Fatalf("json.Marshal of a decoded tree: %v", merr)
		}
		theirs, terr := gowebpki.Transform(marshaled)
		if errors.Is(err, ErrDepth) {
			return
		}
		if err != nil {
			if !errors.Is(err, ErrNonFinite) {
				t.Fatalf("unexpected error %v", err)
			}
			if terr == nil {
				t.Fatalf("we reject (%v), gowebpki gives %s", err, theirs)
			}
			return
		}
		if terr != nil {
			t.Fatalf("gowebpki fails (%v), we give %s", terr, ours)
		}
		if !bytes.Equal(ours, theirs) {
			t.Fatalf("differs from gowebpki\n ours: %s\ntheirs: %s", ours, theirs)
		}

		// Canonical output is valid JSON and a fixed point.
		var again any
		decodeUseNumber(t, ours, &again)
		if twice, err := Canonicalize(again); err != nil || !bytes.Equal(twice, ours) {
			t.Fatalf("not idempotent: %s -> %s (%v)", ours, twice, err)
		}

		domainErr := CheckIntegerDomain(v)
		if want := refDomainViolation(v); (domainErr != nil) != want {
			t.Fatalf("CheckIntegerDomain = %v, reference violation = %v", domainErr, want)
		}
		id, err := SHA256Identity(v, maxNesting)
		switch {
		case domainErr != nil:
			if !errors.Is(err, ErrIntegerRange) {
				t.Fatalf("SHA256Identity = %v, CheckIntegerDomain = %v", err, domainErr)
			}
		case err != nil:
			t.Fatalf("SHA256Identity: %v", err)
		default:
			sum := sha256.Sum256(theirs)
			if want := "sha256:" + hex.EncodeToString(sum[:]); id != want {
				t.Fatalf("identity %s, sha256 of gowebpki bytes %s", id, want)
			}
		}
	})
}

// refDomainViolation is a math/big reference for CheckIntegerDomain.
func refDomainViolation(v any) bool {
	limit := big.NewInt(MaxSafeInteger)
	switch x := v.(type) {
	case map[string]any:
		for _, el := range x {
			if refDomainViolation(el) {
				return true
			}
		}
	case []any:
		for _, el := range x {
			if refDomainViolation(el) {
				return true
			}
		}
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return false
		}
		n, ok := new(big.Int).SetString(string(x), 10)
		return !ok || n.Abs(n).Cmp(limit) > 0
	}
	return false
}

func FuzzStrings(f *testing.F) {
	for _, s := range []string{"", "a", "é", "\x00\x1f\x7f", "\u2028", "<>&", "\xff", "\xed\xa0\x80",
		"abcdefgh\"ijklmnop", "abcdefgh\\", "\U0001F600", "\uE000"} {
		f.Add(s, "k")
	}
	f.Fuzz(func(t *testing.T, s, k string) {
		v := map[string]any{k: s, "list": []any{s, k}}
		ours, err := Canonicalize(v)
		if !utf8.ValidString(s) || !utf8.ValidString(k) {
			if !errors.Is(err, ErrInvalidString) {
				t.Fatalf("invalid UTF-8 accepted: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		marshaled, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := gowebpki.Transform(marshaled)
		if err != nil {
			t.Fatalf("gowebpki: %v", err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Fatalf("\n ours: %+q\ntheirs: %+q", ours, theirs)
		}
	})
}

func FuzzKeyOrder(f *testing.F) {
	f.Add("\uE000", "\U00010000")
	f.Add("a", "ab")
	f.Add("\xff", "\xee")
	f.Add("", "z")
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := compareKeys(a, b), compareKeys(b, a)
		if sign(ab) != -sign(ba) || (ab == 0) != (a == b) {
			t.Fatalf("not antisymmetric: %d %d", ab, ba)
		}
		if utf8.ValidString(a) && utf8.ValidString(b) && sign(ab) != sign(utf16Compare(a, b)) {
			t.Fatalf("compareKeys(%+q, %+q) = %d, UTF-16 order says %d", a, b, ab, utf16Compare(a, b))
		}
	})
}

func FuzzFloat(f *testing.F) {
	for _, x := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e21, 1e-7, 1e-6, 5e-324,
		math.MaxFloat64, 9.999999999999997e+22, 1 << 53, 123456789.125, math.NaN(), math.Inf(1)} {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		ours, err := appendFloat(nil, x)
		theirs, terr := gowebpki.NumberToJSON(x)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			if !errors.Is(err, ErrNonFinite) || terr == nil {
				t.Fatalf("non-finite: %v / %v", err, terr)
			}
			return
		}
		if err != nil || terr != nil {
			t.Fatalf("errors: %v / %v", err, terr)
		}
		if string(ours) != theirs {
			t.Fatalf("%#016x: ours %s, gowebpki %s", bits, ours, theirs)
		}
		back, err := strconv.ParseFloat(string(ours), 64)
		if err != nil || back != x {
			t.Fatalf("%s does not round-trip to %v", ours, x)
		}
		// As a token, the same double canonicalizes identically.
		tok, _ := json.Marshal(x)
		if got, err := Canonicalize(json.Number(tok)); err != nil || string(got) != theirs {
			t.Fatalf("token %s: %s, %v", tok, got, err)
		}
	})
}

func FuzzNumberToken(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.5", "1e5", "1E+5", "-1e-5", "01", "1.", ".1", "+1", "0x1",
		"9007199254740991", "9007199254740992", "18446744073709551616", "1e400", "1_0", "NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		kind := scanNumber(tok)
		isJSONNumber := json.Valid([]byte(tok)) && tok != "" && (tok[0] == '-' || isDigit(tok[0])) &&
			isDigit(tok[len(tok)-1])
		if (kind != tokenInvalid) != isJSONNumber {
			t.Fatalf("scanNumber(%q) = %d, json.Valid says %v", tok, kind, isJSONNumber)
		}
		if kind == tokenInvalid {
			return
		}
		if (kind == tokenInt) == strings.ContainsAny(tok, ".eE") {
			t.Fatalf("%q misclassified", tok)
		}
		ours, err := Canonicalize(json.Number(tok))
		theirs, terr := gowebpki.Transform([]byte(tok))
		if (err != nil) != (terr != nil) {
			t.Fatalf("%q: ours %s, %v; gowebpki %s, %v", tok, ours, err, theirs, terr)
		}
		if err == nil && !bytes.Equal(ours, theirs) {
			t.Fatalf("%q: ours %s, gowebpki %s", tok, ours, theirs)
		}
		if derr := CheckIntegerDomain(json.Number(tok)); (derr != nil) != refDomainViolation(json.Number(tok)) {
			t.Fatalf("%q: CheckIntegerDomain = %v", tok, derr)
		}
	})
}
