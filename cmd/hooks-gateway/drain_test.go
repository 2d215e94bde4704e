package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// loadResult is one request of the drain-under-load test.
type loadResult struct {
	stream bool
	text   string
	status int
	body   []byte
	// sendErr: no response at all (the connection was refused or closed
	// before an answer); readErr: the response was cut.
	sendErr, readErr error
}

// sendChat sends one chat request and keeps apart failing to get an
// answer from getting a cut one.
func sendChat(client *http.Client, addr, text string, stream bool) loadResult {
	res := loadResult{stream: stream, text: text}
	body, _ := json.Marshal(map[string]any{"model": "mock", "stream": stream,
		"messages": []any{map[string]any{"role": "user", "content": "/sleep 400ms " + text}}})
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		res.sendErr = err
		return res
	}
	defer resp.Body.Close()
	res.status = resp.StatusCode
	res.body, res.readErr = io.ReadAll(resp.Body)
	return res
}

// streamedText assembles the content of an SSE body and reports whether it
// ended with data: [DONE].
func streamedText(body []byte) (string, bool, error) {
	var text strings.Builder
	done := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if done {
			return "", false, errors.New("data after [DONE]")
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return "", false, fmt.Errorf("chunk is not JSON: %w", err)
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
		}
	}
	return text.String(), done, nil
}

// SIGTERM under load: eight clients keep sending JSON and streamed requests
// until the gateway refuses them. Every request that got an answer got a
// complete one (a whole completion, a stream ending in [DONE]); the
// gateway stops accepting connections as soon as it starts draining, while
// the requests in flight still finish; and run returns 0.
func TestRunDrainsUnderLoad(t *testing.T) {
	g := start(t, "--config", writeConfig(t, mockConfig))
	const clients = 8
	var (
		mu      sync.Mutex
		results []loadResult
		wg      sync.WaitGroup
	)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One connection per client, as a pooled SDK would have.
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			for n := 0; n < 1000; n++ {
				r := sendChat(client, g.addr, fmt.Sprintf("client %d request %d", i, n), i%2 == 1)
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
				if r.sendErr != nil {
					return // the gateway stopped accepting
				}
			}
		}()
	}
	// Stop while every client has a request in flight: the mock model
	// sleeps 400ms, so a pre_model_call count of at least two per client
	// means each is past its first request and into its second.
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(g.stdout.String(), `"pre_model_call"`) < 2*clients {
		if time.Now().After(deadline) {
			t.Fatal("the clients never got going")
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.cancel()
	// Once draining, new connections are refused although requests are
	// still in flight.
	deadline = time.Now().Add(10 * time.Second)
	for !strings.Contains(g.stderr.String(), "draining") {
		if time.Now().After(deadline) {
			t.Fatal("the gateway never started draining")
		}
		time.Sleep(5 * time.Millisecond)
	}
	refused := false
	for range 100 {
		c, err := net.DialTimeout("tcp", g.addr, time.Second)
		if err != nil {
			refused = true
			break
		}
		c.Close() // accepted before the listener closed; try again
		time.Sleep(5 * time.Millisecond)
	}
	if !refused {
		t.Fatal("the draining gateway still accepts connections")
	}
	code := g.stop(t)
	wg.Wait()
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, g.stderr.String())
	}

	var complete, unsent int
	for _, r := range results {
		switch {
		case r.sendErr != nil:
			unsent++
			continue
		case r.readErr != nil:
			t.Errorf("%q: the answer was cut: %v (%d bytes)", r.text, r.readErr, len(r.body))
			continue
		case r.status != http.StatusOK:
			t.Errorf("%q: status %d: %s", r.text, r.status, r.body)
			continue
		}
		var got string
		if r.stream {
			text, done, err := streamedText(r.body)
			if err != nil || !done {
				t.Errorf("%q: incomplete stream (done %v, %v): %s", r.text, done, err, r.body)
				continue
			}
			got = text
		} else {
			got = content(t, r.body)
		}
		if got != r.text {
			t.Errorf("answered %q, want %q", got, r.text)
		}
		complete++
	}
	t.Logf("%d complete answers, %d requests refused after the stop", complete, unsent)
	// Each client's request in flight at the stop completed.
	if complete < 2*clients || unsent != clients {
		t.Fatalf("%d complete answers, want at least %d; %d clients refused, want all %d", complete, 2*clients, unsent, clients)
	}
	// Every record belongs to a request that completed: a drained gateway
	// leaves no session without its agent_shutdown.
	points := recordPoints(t, g.stdout.String())
	var startups, shutdowns int
	for _, p := range points {
		switch p {
		case "agent_startup":
			startups++
		case "agent_shutdown":
			shutdowns++
		}
	}
	if startups != complete || shutdowns != complete {
		t.Fatalf("%d agent_startup and %d agent_shutdown records for %d complete requests", startups, shutdowns, complete)
	}
}
