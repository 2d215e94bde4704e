package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// decodeStd is the implementation Decode had before the hand-written
// parser: encoding/json's Decoder with UseNumber, preceded by a whole-input
// UTF-8 check and followed by a scan for lone surrogate escapes. It is the
// oracle of FuzzDecodeMatchesEncodingJSON and the baseline of
// BenchmarkDecodeParser.
func decodeStd(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("jsonvalue: %w: invalid UTF-8 at byte offset %d", ErrInvalidString, invalidUTF8Offset(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("jsonvalue: %w: empty input", ErrSyntax)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("jsonvalue: %w: unexpected end of input", ErrSyntax)
		case errors.As(err, &se):
			return nil, fmt.Errorf("jsonvalue: %w at byte offset %d: %v", ErrSyntax, se.Offset, se)
		default:
			return nil, fmt.Errorf("jsonvalue: %w: %v", ErrSyntax, err)
		}
	}
	off := dec.InputOffset()
	for i := off; i < int64(len(data)); i++ {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return nil, fmt.Errorf("jsonvalue: %w: trailing data at byte offset %d", ErrSyntax, i)
		}
	}
	if mayHaveSurrogate(data) {
		if at := loneSurrogate(data); at >= 0 {
			return nil, fmt.Errorf("jsonvalue: %w: lone UTF-16 surrogate escape at byte offset %d", ErrInvalidString, at)
		}
	}
	return v, nil
}

// mayHaveSurrogate is the cheap pre-filter: true when data contains "\u"
// followed by d/D and a hex digit 8-f, i.e. something that could be a
// surrogate escape. Almost all real input skips the exact scan below.
func mayHaveSurrogate(data []byte) bool {
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(`\u`))
		if j < 0 {
			return false
		}
		i += j + 2
		if i+1 < len(data) && (data[i] == 'd' || data[i] == 'D') && isSurrogateNibble(data[i+1]) {
			return true
		}
	}
}

func isSurrogateNibble(c byte) bool {
	return c >= '8' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// loneSurrogate returns the byte offset of the first unpaired surrogate
// escape in data, or -1. data must already be valid JSON: then backslashes
// occur only inside strings, and a backslash starts an escape exactly when
// it is preceded by an even run of backslashes, so each "\u" can be judged
// locally without tracking string boundaries.
func loneSurrogate(data []byte) int {
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(`\u`))
		if j < 0 {
			return -1
		}
		at := i + j
		i = at + 2
		if !escapeStart(data, at) {
			continue
		}
		r, ok := Hex4(data, at+2)
		if !ok {
			continue // cannot happen in valid JSON
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return at // low surrogate without a high one before it
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := Hex4(data, at+8)
			if at+8 > len(data) || data[at+6] != '\\' || data[at+7] != 'u' || !ok || lo < 0xDC00 || lo > 0xDFFF {
				return at
			}
			i = at + 12 // skip the pair so its low half is not seen as stray
		}
	}
}
