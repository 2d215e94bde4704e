package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// abuseConfig gives the gateway small caps, so a few hundred clients are
// an attack, and a probe listener (PROBES is its address).
const abuseConfig = `listeners:
  http: "127.0.0.1:0"
  probes: "PROBES"
upstreams:
  - name: mock
    type: mock
interceptors:
  - name: pass
    type: allow
server:
  read_header_timeout: 1s
  read_timeout: 2s
  idle_timeout: 5s
  max_connections: 40
  probe_connections: 8
  max_requests: 20
  max_requests_per_client: 20
`

// fairnessConfig lets one address hold at most 5 of the 20 request slots
// (a quarter, the default), with connections to spare for everyone.
const fairnessConfig = `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: mock
    type: mock
interceptors:
  - name: pass
    type: allow
server:
  read_header_timeout: 1s
  read_timeout: 2s
  max_connections: 400
  max_requests: 20
`

// trickleAttempt is one slow client's connection: it sends the headers
// of a chat request announcing a large body, then one byte of it every
// 100ms until the gateway answers or closes.
type trickleAttempt struct {
	lived      time.Duration // until the gateway closed the connection
	answer     time.Duration // until the status line, when there was one
	status     int           // 0: closed without an answer
	retryAfter string
}

func trickle(addr string, stop <-chan struct{}) trickleAttempt {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	return trickleOn(c, err, start, stop)
}

// trickleOn is trickle on a connection already dialled.
func trickleOn(c net.Conn, err error, start time.Time, stop <-chan struct{}) trickleAttempt {
	if err != nil {
		return trickleAttempt{lived: time.Since(start)}
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
	answered := make(chan trickleAttempt, 1)
	go func() {
		var a trickleAttempt
		tp := textproto.NewReader(bufio.NewReader(c))
		if line, err := tp.ReadLine(); err == nil {
			a.answer = time.Since(start)
			if f := strings.Fields(line); len(f) >= 2 {
				a.status, _ = strconv.Atoi(f[1])
			}
			if h, err := tp.ReadMIMEHeader(); err == nil {
				a.retryAfter = h.Get("Retry-After")
			}
		}
		io.Copy(io.Discard, c) // until the gateway closes
		answered <- a
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case a := <-answered:
			a.lived = time.Since(start)
			return a
		case <-stop:
			c.Close()
			a := <-answered
			a.lived = -1 // still open when the attack ended: not judged
			return a
		case <-tick.C:
			c.Write([]byte(" "))
		}
	}
}

// probe GETs path on a fresh connection within a 1s bound.
func probe(addr, path string) (time.Duration, error) {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		return time.Since(start), err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return time.Since(start), fmt.Errorf("status %d", resp.StatusCode)
	}
	return time.Since(start), nil
}

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Three hundred slow clients against a gateway capped at 40 connections
// (plus 8 for probes) and 20 requests, each reconnecting 100ms after its
// connection ends: /healthz and /metrics on the probe listener answer
// throughout within 1s (on the main listener, the probe reserve answers
// what the reconnecting clients leave of it: logged, not judged);
// no trickling connection outlives read_timeout by more than a second;
// requests beyond the request cap get 503 with Retry-After without
// waiting for their bodies; the
// connections open never exceed the caps; the refusals are counted.
func TestSlowClientsDoNotStarveProbes(t *testing.T) {
	probes := freeAddr(t)
	g := start(t, "--config", writeConfig(t, strings.Replace(abuseConfig, "PROBES", probes, 1)))
	const clients = 300
	stop := make(chan struct{})
	var (
		mu       sync.Mutex
		attempts []trickleAttempt
		wg       sync.WaitGroup
	)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				a := trickle(g.addr, stop)
				mu.Lock()
				attempts = append(attempts, a)
				mu.Unlock()
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	openRe := regexp.MustCompile(`(?m)^hooks_gateway_connections_open\{pool="(main|probe)"\} (\d+)`)
	var probed, mainOK int
	var slowest time.Duration
	var maxMain, maxProbe int
	deadline := time.Now().Add(5 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			d, err := probe(probes, path)
			if err != nil {
				t.Errorf("probe %d %s under the attack: %v after %s", n, path, err, d)
			}
			probed++
			slowest = max(slowest, d)
			if _, err := probe(g.addr, path); err == nil {
				mainOK++
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The gauges, read once more under the attack.
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := client.Get("http://" + probes + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, m := range openRe.FindAllStringSubmatch(string(b), -1) {
			v, _ := strconv.Atoi(m[2])
			if m[1] == "main" {
				maxMain = v
			} else {
				maxProbe = v
			}
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d probes on the probe listener, slowest %s; %d of as many answered on the main listener; %d attempts; open at the end: main %d, probe %d",
		probed, slowest, mainOK, len(attempts), maxMain, maxProbe)
	if maxMain > 40 || maxProbe > 8 {
		t.Errorf("connections open main %d, probe %d: over the caps 40 and 8", maxMain, maxProbe)
	}

	var cut, refusedReq, closed int
	for _, a := range attempts {
		if a.lived > 3*time.Second {
			t.Errorf("a trickling connection lived %s (read_timeout 2s)", a.lived)
		}
		switch {
		case a.status == http.StatusServiceUnavailable:
			refusedReq++
			if a.retryAfter == "" {
				t.Errorf("503 without Retry-After")
			}
			// At once, not after the body: well before read_timeout
			// (the bound leaves room for a loaded CI machine).
			if a.answer >= 1900*time.Millisecond {
				t.Errorf("a refused request took %s to be answered", a.answer)
			}
		case a.status == http.StatusRequestTimeout || (a.status == 0 && a.lived >= 1900*time.Millisecond):
			cut++
		case a.status == 0:
			closed++
		}
	}
	t.Logf("cut by read_timeout %d, refused with 503 %d, closed at accept %d", cut, refusedReq, closed)
	if cut == 0 || refusedReq == 0 || closed == 0 {
		t.Errorf("want each outcome under the attack: cut %d, 503 %d, closed at accept %d", cut, refusedReq, closed)
	}

	resp, err := client.Get("http://" + probes + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, reason := range []string{"connections", "requests"} {
		m := regexp.MustCompile(`hooks_gateway_overload_refusals_total\{reason="` + reason + `"\} (\d+)`).FindSubmatch(b)
		if m == nil || string(m[1]) == "0" {
			t.Errorf("refusals for %s not counted: %s", reason, m)
		}
	}
}

// A hundred slow-body connections from one address take that address's
// share of the request slots (5 of 20), not every slot: a client on
// another address is served throughout, and the refusals are counted as
// reason="client".
func TestSlowClientCannotStarveOthers(t *testing.T) {
	g := start(t, "--config", writeConfig(t, fairnessConfig))
	// The other client dials from 127.0.0.2: another address on loopback.
	other := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext,
	}}
	if _, err := other.Get("http://" + g.addr + "/healthz"); err != nil {
		t.Skipf("cannot dial from 127.0.0.2 here: %v", err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var refused sync.Map
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				a := trickle(g.addr, stop)
				if a.status == http.StatusServiceUnavailable {
					refused.Store(i, true)
				}
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // the attack takes its share
	body := `{"model":"mock","messages":[{"role":"user","content":"hello"}]}`
	deadline := time.Now().Add(3 * time.Second)
	var served int
	for time.Now().Before(deadline) {
		resp, err := other.Post("http://"+g.addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatalf("the other client under the attack: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the other client under the attack: status %d", resp.StatusCode)
		}
		served++
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	var n int
	refused.Range(func(any, any) bool { n++; return true })
	if n == 0 {
		t.Fatal("no slow request was refused: the attacker was not capped")
	}
	resp, err := other.Get("http://" + g.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`hooks_gateway_overload_refusals_total\{reason="client"\} (\d+)`).FindSubmatch(b)
	if m == nil || string(m[1]) == "0" {
		t.Errorf("refusals for one client's share not counted: %s", m)
	}
	t.Logf("the other client was served %d times; %d slow clients were refused at least once", served, n)
}
