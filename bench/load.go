package main

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// attackResult is one fixed-rate attack on one target.
type attackResult struct {
	latencies []time.Duration
	// ttfb is, for a streamed answer, each successful request's time to
	// its first data byte (see firstDataReader); latencies its total.
	ttfb     []time.Duration
	requests int
	errors   int
	// errorKinds counts errors by status or transport message, for the
	// report (bodies are not kept).
	errorKinds map[string]int
	elapsed    time.Duration // first request sent to last answer received
	sendSpan   time.Duration // first request sent to last request sent
}

// rate is the completed request rate: requests over the time from the
// first send to the last answer, so a target that queues lowers it (the
// saturation search's criterion).
func (a *attackResult) rate() float64 {
	if a.elapsed <= 0 {
		return 0
	}
	return float64(a.requests) / a.elapsed.Seconds()
}

// sendRate is the rate at which requests left, as vegeta reports it:
// requests over the span of their send times. Unlike rate it does not
// halve when every answer is a 2 s stream.
func (a *attackResult) sendRate() float64 {
	if a.sendSpan <= 0 {
		return 0
	}
	return float64(a.requests) / a.sendSpan.Seconds()
}

// merge adds b's requests to a.
func (a *attackResult) merge(b *attackResult) {
	a.latencies = append(a.latencies, b.latencies...)
	a.ttfb = append(a.ttfb, b.ttfb...)
	a.requests += b.requests
	a.errors += b.errors
	a.elapsed += b.elapsed
	a.sendSpan += b.sendSpan
	if a.errorKinds == nil {
		a.errorKinds = map[string]int{}
	}
	for k, n := range b.errorKinds {
		a.errorKinds[k] += n
	}
}

// errorSummary lists the error kinds, most frequent first.
func (a *attackResult) errorSummary() string { return kindSummary(a.errorKinds) }

// kindSummary lists counted kinds, most frequent first.
func kindSummary(counts map[string]int) string {
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if counts[kinds[i]] != counts[kinds[j]] {
			return counts[kinds[i]] > counts[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d× %s", counts[k], k))
	}
	return strings.Join(parts, "; ")
}

// loadClient is the generator's HTTP client. Attacks share it so its
// connections stay warm from one round to the next (a vegeta Attacker
// cannot be reused once an attack has ended).
func loadClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConns = 4096
	tr.MaxIdleConnsPerHost = 4096
	tr.ForceAttemptHTTP2 = false
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// hits sends targets (round robin) at rate for d through an open-loop
// generator and yields each request's result: requests leave on schedule
// whatever the latency of earlier ones (workers are added as needed), so
// a slow target cannot hide its queueing (no coordinated omission).
func hits(c *http.Client, targets []vegeta.Target, rate int, d time.Duration) <-chan *vegeta.Result {
	return hitsPaced(c, targets, vegeta.ConstantPacer{Freq: rate, Per: time.Second}, d)
}

// hitsPaced is hits with any pacer (d 0: until the pacer stops).
func hitsPaced(c *http.Client, targets []vegeta.Target, pacer vegeta.Pacer, d time.Duration) <-chan *vegeta.Result {
	atk := vegeta.NewAttacker(
		vegeta.Client(c),
		vegeta.MaxBody(0), // answers are read to the end but not kept
		vegeta.Workers(32),
	)
	return atk.Attack(vegeta.NewStaticTargeter(targets...), pacer, d, "")
}

// errNoData is the error kind of a streamed answer that ended without a
// single data line.
const errNoData = "stream without a data: line"

// errNoTerminal is the error kind of a streamed answer that ended
// without its surface's terminal event: denied or cut, not complete.
const errNoTerminal = "stream without its terminal event"

// attack sends targets (round robin) at rate for d and collects the results.
//
// With stream set it also takes each request's time to first byte.
// Vegeta's Result has none, so the attack's client gets a transport that
// wraps each answer's body in a firstDataReader keyed by the sequence
// number vegeta sends in X-Vegeta-Seq; the time is taken from the
// Result's Timestamp, the same origin as its Latency. Vegeta's pacer and
// workers are untouched, so the attack stays open-loop: requests leave on
// schedule while earlier streams are still being read (no coordinated
// omission), and the body wrapper only notes a time as the reads pass.
func attack(c *http.Client, targets []vegeta.Target, rate int, d time.Duration, stream bool) *attackResult {
	return attackPaced(c, targets, vegeta.ConstantPacer{Freq: rate, Per: time.Second}, d, stream)
}

// attackPaced is attack with any pacer (d 0: until the pacer stops).
func attackPaced(c *http.Client, targets []vegeta.Target, pacer vegeta.Pacer, d time.Duration, stream bool) *attackResult {
	var rec *ttfbRecorder
	if stream {
		rec = newTTFBRecorder()
		cc := *c // same pooled transport underneath: connections stay warm
		cc.Transport = &ttfbTransport{base: c.Transport, rec: rec}
		c = &cc
	}
	res := &attackResult{errorKinds: map[string]int{}}
	var first, last, lastSent time.Time
	for r := range hitsPaced(c, targets, pacer, d) {
		res.requests++
		var mark streamMark
		if rec != nil {
			mark = rec.take(r.Seq)
		}
		if first.IsZero() || r.Timestamp.Before(first) {
			first = r.Timestamp
		}
		if r.Timestamp.After(lastSent) {
			lastSent = r.Timestamp
		}
		if end := r.End(); end.After(last) {
			last = end
		}
		if r.Error != "" || r.Code != http.StatusOK {
			res.errors++
			kind := r.Error
			if r.Code != 0 {
				kind = fmt.Sprintf("HTTP %d", r.Code)
			}
			res.errorKinds[kind]++
			continue
		}
		if rec != nil && mark.first.IsZero() {
			res.errors++
			res.errorKinds[errNoData]++
			continue
		}
		if rec != nil && mark.cut {
			res.errors++
			res.errorKinds[errNoTerminal]++
			continue
		}
		res.latencies = append(res.latencies, r.Latency)
		if rec != nil {
			res.ttfb = append(res.ttfb, mark.first.Sub(r.Timestamp))
		}
	}
	res.elapsed = last.Sub(first)
	res.sendSpan = lastSent.Sub(first)
	return res
}
