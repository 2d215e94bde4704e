package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The deny probe's request reaches the mock as one, the load's never do.
func TestDenyProbeRequest(t *testing.T) {
	for _, c := range streamCases() {
		req := c.request(2048, true, false)
		if isDenyProbe(req) {
			t.Errorf("%s: a load request is taken for the deny probe", c.name)
		}
		probe, err := withModel(req, denyProbeModel)
		if err != nil {
			t.Fatal(err)
		}
		if !isDenyProbe(probe) || !isStream(probe) {
			t.Errorf("%s: the deny probe request is not recognised (%.80s…)", c.name, probe)
		}
	}
}

func TestDenyTexts(t *testing.T) {
	texts := denyTexts(200)
	answer := strings.Join(texts, "")
	if len(texts) != 200 || strings.Count(answer, denyCredential) != 1 || texts[100] != denyCredential+" " {
		t.Fatalf("deny texts: %d deltas, credential at %q", len(texts), texts[100])
	}
	if !strings.HasPrefix(denyCredential, "sk-") || len(denyCredential) != 3+24 || strings.ContainsAny(denyCredential[3:], "0123456789_-") {
		t.Fatalf("%q is not sk- and 24 letters", denyCredential)
	}
}

// The checker counts what the client got from the credential on, on
// every surface: nothing for a stream cut before it, the credential for
// one cut after it, the whole rest for the full answer (which also ends
// with the terminal event).
func TestCheckDenyStream(t *testing.T) {
	o := upstreamOptions{contentBytes: 64, chunks: 20, denyProbe: true}
	texts := o.deltaTexts()
	answer := strings.Join(texts, "")
	rest := len(answer) - strings.Index(answer, denyCredential)
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			a := c.stream(o)
			cred := a.first + len(texts)/2
			join := func(evs [][]byte, tail string) string { return string(bytes.Join(evs, nil)) + tail }
			for _, tc := range []struct {
				name        string
				body        string
				unverdicted int
				terminal    bool
			}{
				{"cut before the credential, error event", join(a.events[:cred], ": keep-alive\n\nevent: error\ndata: {\"error\":{\"message\":\"denied\"}}\n\n"), 0, false},
				{"cut before the first delta", join(a.events[:a.first], ""), 0, false},
				{"cut after the credential", join(a.events[:cred+1], ""), len(denyCredential) + 1, false},
				{"the whole answer", join(a.events, ""), rest, true},
			} {
				got, err := checkDenyStream(c.path, tc.body, texts)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if got.Unverdicted != tc.unverdicted || got.Terminal != tc.terminal {
					t.Errorf("%s: unverdicted %d terminal %v, want %d and %v", tc.name, got.Unverdicted, got.Terminal, tc.unverdicted, tc.terminal)
				}
				if (got.failure() == "") != (tc.unverdicted == 0 && !tc.terminal) {
					t.Errorf("%s: failure %q", tc.name, got.failure())
				}
			}
			// Deltas withheld but the credential in a snapshot event.
			snap := join(a.events[:cred], "data: {\"text\":\""+denyCredential+"\"}\n\n")
			if got, _ := checkDenyStream(c.path, snap, texts); got.Unverdicted != rest {
				t.Errorf("credential outside the deltas: unverdicted %d, want %d", got.Unverdicted, rest)
			}
		})
	}
	// Text the upstream never sent is a malformed stream, not a pass.
	other := string(bytes.Join(chatStream(upstreamOptions{chunks: 20}).events, nil))
	if _, err := checkDenyStream(chatPath, other, texts); err == nil {
		t.Fatal("a stream of other text passed the check")
	}
}

// End to end against servers: the paced mock itself (no policy) releases
// the credential and ends normally, which the probe reports; a gateway
// stand-in that stops before the credential passes.
func TestRunDenyProbe(t *testing.T) {
	o := upstreamOptions{contentBytes: 64, chunks: 10, interval: time.Millisecond}
	up := httptest.NewServer(upstreamMux(o))
	defer up.Close()
	sc := scenario{path: chatPath, request: chatRequest(512, true, false), upstream: o}
	d, err := runDenyProbe(context.Background(), up.URL+chatPath, sc)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != http.StatusOK || d.Unverdicted == 0 || !d.Terminal || d.failure() == "" {
		t.Fatalf("direct: %+v, failure %q", d, d.failure())
	}

	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Post(up.URL+chatPath, "application/json", r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		s := string(b)
		s = s[:strings.LastIndex(s[:strings.Index(s, denyCredential)], "data: ")]
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, s+"data: {\"error\":{\"message\":\"denied\"}}\n\n")
	}))
	defer cut.Close()
	d, err = runDenyProbe(context.Background(), cut.URL, sc)
	if err != nil {
		t.Fatal(err)
	}
	if d.Unverdicted != 0 || d.Terminal || d.failure() != "" || d.TextBytes == 0 {
		t.Fatalf("cut before the credential: %+v, failure %q", d, d.failure())
	}
}

// The deny probe's answer is for the probe alone: requests after it get
// the ordinary answer (a captured variable once made every later stream
// the probe's, so the load measured denied streams).
func TestDenyProbeAnswerDoesNotStick(t *testing.T) {
	srv := httptest.NewServer(upstreamMux(upstreamOptions{contentBytes: 64, chunks: 6}))
	defer srv.Close()
	get := func(model string) string {
		body := `{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"hi"}]}`
		resp, err := http.Post(srv.URL+chatPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if !strings.Contains(get(denyProbeModel), denyCredential) {
		t.Fatal("the probe's answer lacks the credential")
	}
	for range 2 {
		if strings.Contains(get("gpt-test"), denyCredential) {
			t.Fatal("an ordinary request after the probe got the probe's answer")
		}
	}
}
