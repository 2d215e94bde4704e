package main

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// overloadTally counts one target's answers under overload: admitted
// (200), refused (503; with or without a valid Retry-After), and anything
// else, with the latencies of the first two.
type overloadTally struct {
	requests int
	admitted []time.Duration
	refused  []time.Duration
	// noRetryAfter counts 503s without a Retry-After of whole seconds
	// (RFC 9110 §10.2.3 also allows a date; the gateway sends seconds).
	noRetryAfter int
	other        map[string]int
}

// add counts one answer: its status (0 for a transport error, then err
// says which), headers and latency.
func (t *overloadTally) add(code int, h http.Header, latency time.Duration, err string) {
	t.requests++
	switch {
	case err == "" && code == http.StatusOK:
		t.admitted = append(t.admitted, latency)
	case code == http.StatusServiceUnavailable:
		t.refused = append(t.refused, latency)
		if !validRetryAfter(h.Get("Retry-After")) {
			t.noRetryAfter++
		}
	default:
		if t.other == nil {
			t.other = map[string]int{}
		}
		kind := err
		if code != 0 {
			kind = fmt.Sprintf("HTTP %d", code)
		}
		t.other[kind]++
	}
}

// otherCount is the answers neither admitted nor refused with 503.
func (t *overloadTally) otherCount() int {
	n := 0
	for _, c := range t.other {
		n += c
	}
	return n
}

// validRetryAfter reports whether v is a Retry-After of delay-seconds: a
// non-negative integer.
func validRetryAfter(v string) bool {
	if v == "" {
		return false
	}
	n, err := strconv.Atoi(v)
	return err == nil && n >= 0
}
