package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// stack is the three processes of one scenario.
type stack struct {
	upstream, bare, gateway *child
	recordsPath             string
}

// errSkip marks a scenario that cannot run here; its message says why.
type errSkip struct{ why string }

func (e *errSkip) Error() string { return e.why }

// startStack starts the upstream, the bare proxy and the gateway for sc.
// A gateway whose configuration does not build skips the scenario.
func startStack(ctx context.Context, dir string, sc scenario, redisURL string) (*stack, error) {
	st := &stack{recordsPath: filepath.Join(dir, "records.jsonl")}
	var err error
	upArgs := []string{"--content-bytes", strconv.Itoa(sc.upstream.contentBytes), "--chunks", strconv.Itoa(sc.upstream.chunks)}
	if sc.upstream.toolCall {
		upArgs = append(upArgs, "--tool-call")
	}
	if sc.upstream.interval > 0 {
		upArgs = append(upArgs, "--interval", sc.upstream.interval.String())
	}
	if st.upstream, err = startChild(ctx, dir, "upstream", roleUpstream, upArgs...); err != nil {
		return nil, err
	}
	if st.bare, err = startChild(ctx, dir, "bareproxy", roleProxy, "--upstream", st.upstream.url()); err != nil {
		st.stop()
		return nil, err
	}
	vars := map[string]string{"UPSTREAM": st.upstream.url(), "RECORDS": st.recordsPath, "REDIS_URL": redisURL}
	path, err := writeConfig(dir, sc.config, vars)
	if err != nil {
		st.stop()
		return nil, err
	}
	if st.gateway, err = startChild(ctx, dir, "gateway", roleGateway, "--config", path); err != nil {
		st.stop()
		if isExit(err) {
			return nil, &errSkip{why: "the gateway does not build configs/" + sc.config + ": " + oneLine(err.Error())}
		}
		return nil, err
	}
	return st, nil
}

// stop ends every process started; like child.stop, it may be called
// again.
func (st *stack) stop() {
	for _, c := range []*child{st.gateway, st.bare, st.upstream} {
		if c != nil {
			c.stop()
		}
	}
}

// target is one system under measurement.
type target struct {
	name  string
	proc  *child // the process the requests enter
	url   string
	reqs  []vegeta.Target
	extra []*child // other processes serving the same requests (the upstream)
}

// targets are direct, bare proxy and gateway, in round order.
func (st *stack) targets(sc scenario) []*target {
	mk := func(name string, proc *child, url string, extra ...*child) *target {
		return &target{name: name, proc: proc, url: url, reqs: requestsFor(sc, url), extra: extra}
	}
	gwPath := sc.path
	if sc.gatewayPath != "" {
		gwPath = sc.gatewayPath
	}
	return []*target{
		mk("direct", st.upstream, st.upstream.url()+sc.path),
		mk("bare proxy", st.bare, st.bare.url()+sc.path, st.upstream),
		mk("gateway", st.gateway, st.gateway.url()+gwPath, st.upstream),
	}
}

// sessionCount is how many managed sessions the managed scenarios spread
// their requests over: enough that no session has two requests in flight
// at once, so each trail's records are written in sequence order.
const sessionCount = 1000

// requestsFor is the request list of sc against url (one per managed
// session, else one).
func requestsFor(sc scenario, url string) []vegeta.Target {
	return requestsWith(sc, url, nil)
}

// requestsWith is requestsFor with extra headers on every request (a
// peer's routing headers).
func requestsWith(sc scenario, url string, extra map[string]string) []vegeta.Target {
	h := http.Header{"Content-Type": []string{"application/json"}}
	for k, v := range sc.headers {
		h.Set(k, v)
	}
	for k, v := range extra {
		h.Set(k, v)
	}
	n, prefix := sc.sessions, sc.name+"-"
	if sc.managed {
		n, prefix = sessionCount, "bench-"
	}
	if n == 0 {
		return []vegeta.Target{{Method: http.MethodPost, URL: url, Body: sc.request, Header: h}}
	}
	ts := make([]vegeta.Target, n)
	for i := range ts {
		hh := h.Clone()
		hh.Set(proxy.HeaderSession, fmt.Sprintf("%s%04d", prefix, i))
		ts[i] = vegeta.Target{Method: http.MethodPost, URL: url, Body: sc.request, Header: hh}
	}
	return ts
}

// probe sends one request to t and checks the answer: a scenario that
// fails here would only measure errors.
func probe(ctx context.Context, t *target, check func(string) string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r := t.reqs[0]
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, strings.NewReader(string(r.Body)))
	if err != nil {
		return err
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("probe %s: %w", t.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("probe %s: %w", t.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("probe %s: HTTP %d: %s", t.name, resp.StatusCode, oneLine(string(body)))
	}
	if check != nil {
		if msg := check(string(body)); msg != "" {
			return fmt.Errorf("probe %s: %s", t.name, msg)
		}
	}
	return nil
}

// oneLine shortens a multi-line message for a table cell.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
