package wiretest

import (
	"strconv"
	"unsafe"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// SliceOf is the path of a string (or member name) of v that slices
// text's string, or "": what a session's memo keeps must hold none, or
// it would keep the whole body of the turn that first sent it alive.
func SliceOf(v any, text jsonvalue.Text) string {
	whole := text.Slice(0, len(text.Bytes()))
	base := uintptr(unsafe.Pointer(unsafe.StringData(whole)))
	in := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return len(s) > 0 && p >= base && p < base+uintptr(len(whole))
	}
	switch x := v.(type) {
	case string:
		if in(x) {
			return "$"
		}
	case []any:
		for i, e := range x {
			if p := SliceOf(e, text); p != "" {
				return "[" + strconv.Itoa(i) + "]" + p
			}
		}
	case map[string]any:
		for k, e := range x {
			if in(k) {
				return "." + k
			}
			if p := SliceOf(e, text); p != "" {
				return "." + k + p
			}
		}
	}
	return ""
}
