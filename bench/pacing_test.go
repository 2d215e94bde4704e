package main

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// streamCase is one surface's route, request and streamed answer.
type streamCase struct {
	name    string
	path    string
	request func(size int, stream, tools bool) []byte
	stream  func(upstreamOptions) streamAnswer
}

func streamCases() []streamCase {
	return []streamCase{
		{"chat", chatPath, chatRequest, chatStream},
		{"responses", responsesPath, responsesRequest, responsesStream},
		{"messages", messagesPath, messagesRequest, messagesStream},
	}
}

// Each answer's delta span holds exactly its text deltas, in order: the
// pacing and the deny probe rely on it.
func TestStreamAnswerDeltaSpan(t *testing.T) {
	for _, c := range streamCases() {
		for _, deny := range []bool{false, true} {
			o := upstreamOptions{contentBytes: 64, chunks: 12, denyProbe: deny}
			a := c.stream(o)
			sf := surfaceOf(c.path)
			var texts []string
			for i, ev := range a.events {
				evs := parseSSE(string(ev))
				if len(evs) != 1 {
					t.Fatalf("%s: event %d parses to %d events", c.name, i, len(evs))
				}
				text := sf.text(evs[0].data)
				inSpan := i >= a.first && i < a.first+a.n
				if inSpan != (text != "") {
					t.Errorf("%s: event %d (in span: %v) carries text %q", c.name, i, inSpan, text)
				}
				if text != "" {
					texts = append(texts, text)
				}
				if last := i == len(a.events)-1; sf.terminal(evs[0]) != last {
					t.Errorf("%s: event %d terminal = %v, last = %v", c.name, i, !last, last)
				}
			}
			if !slices.Equal(texts, o.deltaTexts()) {
				t.Errorf("%s: deltas %q, want %q", c.name, texts, o.deltaTexts())
			}
		}
	}
}

// A paced answer is sent in n groups: the opening events with the first
// delta, one delta each, the closing events with the last; together they
// are the whole answer in order.
func TestStreamAnswerGroups(t *testing.T) {
	a := chatStream(upstreamOptions{chunks: 4})
	g := a.groups()
	if len(g) != 4 {
		t.Fatalf("%d groups for 4 deltas", len(g))
	}
	if len(g[0]) != a.first+1 || len(g[1]) != 1 || len(g[3]) != len(a.events)-a.first-3 {
		t.Fatalf("group sizes %d, %d, %d, %d", len(g[0]), len(g[1]), len(g[2]), len(g[3]))
	}
	var joined [][]byte
	for _, x := range g {
		joined = append(joined, x...)
	}
	if !slices.EqualFunc(joined, a.events, bytes.Equal) {
		t.Fatal("the groups are not the answer in order")
	}
}

// The paced mock sends every surface's deltas no sooner than one
// interval apart, the first one interval after the request (lower bounds
// only: a busy machine can make them later, never earlier), and the
// whole answer.
func TestPacedUpstream(t *testing.T) {
	const interval, n = 5 * time.Millisecond, 6
	o := upstreamOptions{contentBytes: 64, chunks: n, interval: interval}
	srv := httptest.NewServer(upstreamMux(o))
	defer srv.Close()
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			sent := time.Now()
			resp, err := http.Post(srv.URL+c.path, "application/json", bytes.NewReader(c.request(512, true, false)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			sf := surfaceOf(c.path)
			var arrivals []time.Duration
			var body strings.Builder
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				line := sc.Text()
				body.WriteString(line + "\n")
				if d, ok := strings.CutPrefix(line, "data: "); ok && sf.text(d) != "" {
					arrivals = append(arrivals, time.Since(sent))
				}
			}
			if len(arrivals) != n {
				t.Fatalf("%d deltas arrived, want %d", len(arrivals), n)
			}
			for k, at := range arrivals {
				if at < time.Duration(k+1)*interval {
					t.Errorf("delta %d arrived %v after the request, before %d intervals", k, at, k+1)
				}
			}
			evs := parseSSE(body.String())
			if len(evs) != len(c.stream(o).events) || !sf.terminal(evs[len(evs)-1]) {
				t.Fatalf("%d events ending terminal=%v, want the whole answer", len(evs), sf.terminal(evs[len(evs)-1]))
			}
		})
	}
}

func TestParseSSE(t *testing.T) {
	body := ": keep-alive\r\n\r\nevent: a\r\ndata: {\"x\":1}\r\n\r\ndata: one\ndata: two\n\nevent: only a name\n\ndata: cut"
	evs := parseSSE(body)
	want := []sseEvent{{"a", `{"x":1}`}, {"", "one\ntwo"}, {"", "cut"}}
	if !slices.Equal(evs, want) {
		t.Fatalf("parseSSE = %q, want %q", evs, want)
	}
}
