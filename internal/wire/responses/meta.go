package responses

import (
	"encoding/json"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// Metadata is every answer member that is not projected: it is never
// model text, so it is shape-checked (token-shaped strings of bounded
// length, bounded numbers, enums) and removed when outside its shape, or
// the answer refused where clients need the member (item ids and
// statuses).
// maxNumberLen bounds a metadata number token: digits can spell text too.
const maxNumberLen = 32

// metaChecks are the top-level metadata members and their shapes.
var metaChecks = map[string]func(any) bool{
	"id":                     isID,
	"object":                 func(v any) bool { return v == "response" },
	"created_at":             isTimestamp,
	"completed_at":           isTimestamp,
	"model":                  isModelName,
	"service_tier":           func(v any) bool { return matches(wire.IsEnum, v) },
	"truncation":             func(v any) bool { return v == "auto" || v == "disabled" },
	"prompt_cache_retention": func(v any) bool { return matches(wire.IsEnum, v) },
	"store":                  isBool,
	"background":             isBool,
	"parallel_tool_calls":    isBool,
	"temperature":            isNumber,
	"top_p":                  isNumber,
	"top_logprobs":           isCount,
	"max_output_tokens":      isCount,
	"max_tool_calls":         isCount,
}

// metaOK reports whether a top-level metadata value is null or well
// shaped.
func metaOK(key string, v any) bool {
	check, ok := metaChecks[key]
	return ok && (v == nil || check(v))
}

// isID and isModelName apply the shared metadata shapes to a decoded
// value.
func isID(v any) bool {
	s, ok := v.(string)
	return ok && wire.IsID(s)
}

func isModelName(v any) bool {
	s, ok := v.(string)
	return ok && wire.IsModelName(s)
}

// matches reports whether v is a string of the shape shape accepts.
func matches(shape func(string) bool, v any) bool {
	s, ok := v.(string)
	return ok && shape(s)
}

func isBool(v any) bool {
	_, ok := v.(bool)
	return ok
}

// isNumber accepts a number token of bounded length.
func isNumber(v any) bool {
	n, ok := v.(json.Number)
	return ok && len(n) <= maxNumberLen
}

// isCount accepts a non-negative integer token of at most 20 digits.
func isCount(v any) bool {
	n, ok := v.(json.Number)
	return ok && isUint(string(n), 20)
}

// isTimestamp accepts Unix seconds (at most 12 digits).
func isTimestamp(v any) bool {
	n, ok := v.(json.Number)
	return ok && isUint(string(n), 12)
}

func isUint(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// itemStatuses are the statuses of message, function_call and reasoning
// items.
var itemStatuses = map[any]bool{"in_progress": true, "completed": true, "incomplete": true}

// responseStatuses are the statuses of a response object.
var responseStatuses = map[any]bool{"queued": true, "in_progress": true, "completed": true, "incomplete": true, "failed": true, "cancelled": true}

// incompleteReasons are the reasons of incomplete_details.
var incompleteReasons = map[string]bool{"max_output_tokens": true, "content_filter": true}

// checkItemMeta refuses an interpreted item whose id or status is outside
// its shape: clients echo item ids into the next request and read the
// status, so neither can be removed.
func checkItemMeta(obj map[string]any, field string) error {
	if v, ok := obj["id"]; ok && !isID(v) {
		return respErr(field+".id", "is not an item id")
	}
	if v, ok := obj["status"]; ok && v != nil && !itemStatuses[v] {
		return respErr(field+".status", "is not an item status")
	}
	return nil
}

// Usage counts the gateway keeps; usage is re-rendered from them whenever
// it holds anything else.
var (
	usageCounts  = []string{"input_tokens", "output_tokens", "total_tokens"}
	usageDetails = map[string][]string{
		"input_tokens_details":  {"cached_tokens"},
		"output_tokens_details": {"reasoning_tokens"},
	}
)

// checkedUsage returns the usage object holding only the known counts
// of u, and whether that is all u held.
func checkedUsage(u map[string]any) (map[string]any, bool) {
	out := map[string]any{}
	clean := true
	for k, v := range u {
		switch {
		case contains(usageCounts, k) && isCount(v):
			out[k] = v
		case usageDetails[k] != nil:
			d, ok := v.(map[string]any)
			if !ok {
				clean = false
				continue
			}
			kept := map[string]any{}
			for dk, dv := range d {
				if contains(usageDetails[k], dk) && isCount(dv) {
					kept[dk] = dv
				} else {
					clean = false
				}
			}
			out[k] = kept
		default:
			clean = false
		}
	}
	return out, clean
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
