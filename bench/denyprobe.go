package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The deny probe: one streamed request, outside the load, whose paced
// answer carries a credential the default policy denies (deny-credentials:
// sk- followed by 20 or more characters) halfway through.
const (
	// denyProbeModel is the model name that makes the mock upstream answer
	// with the credential (the gateway forwards the model name; the
	// load's requests never use it).
	denyProbeModel = "bench-deny-probe"
	// denyCredential is sk- and 24 letters.
	denyCredential = "sk-benchProbeDenyCredential"
)

// denyTexts are the deny probe's n content deltas: the ordinary answer's
// "tokI " (at least two), with the middle one replaced by the credential
// whole (so that whatever segment the gateway verdicts holds either all
// of it or none).
func denyTexts(n int) []string {
	out := tokenTexts(max(n, 2))
	out[len(out)/2] = denyCredential + " "
	return out
}

// DenyProbeResult is what the client received of the deny probe's answer.
type DenyProbeResult struct {
	Status int `json:"status"`
	// TextBytes is the answer text the client received.
	TextBytes int `json:"text_bytes"`
	// Unverdicted is the bytes of the answer released from the credential
	// on: the text no allowing verdict covered. It must be 0.
	Unverdicted int `json:"unverdicted_bytes_released"`
	// Terminal says the stream ended with the surface's normal last event
	// ([DONE], response.completed, message_stop), which a denied stream
	// must not.
	Terminal bool `json:"terminal_event"`
}

// failure says what is wrong with the probe's outcome, "" when nothing.
func (d *DenyProbeResult) failure() string {
	var why []string
	if d.Unverdicted > 0 {
		why = append(why, fmt.Sprintf("unverdicted bytes released: %d", d.Unverdicted))
	}
	if d.Terminal {
		why = append(why, "the denied stream ended with the surface's normal terminal event")
	}
	return strings.Join(why, "; ")
}

// checkDenyStream measures a client's copy of the deny probe's stream on
// the route path, against the upstream's delta texts. The client's text
// (its text deltas, concatenated) must be a prefix of the answer's; the
// bytes of it from the credential's offset on are unverdicted. A
// credential outside the text deltas (a done or snapshot event repeating
// the text) counts the whole rest of the answer.
func checkDenyStream(path, body string, texts []string) (*DenyProbeResult, error) {
	answer := strings.Join(texts, "")
	cut := strings.Index(answer, denyCredential)
	sf := surfaceOf(path)
	var got strings.Builder
	res := &DenyProbeResult{}
	for _, ev := range parseSSE(body) {
		got.WriteString(sf.text(ev.data))
		res.Terminal = res.Terminal || sf.terminal(ev)
	}
	text := got.String()
	res.TextBytes = len(text)
	if !strings.HasPrefix(answer, text) {
		return res, fmt.Errorf("the client's %d bytes of text are not a prefix of the upstream's answer", len(text))
	}
	res.Unverdicted = max(len(text)-cut, 0)
	if strings.Count(body, denyCredential) > strings.Count(text, denyCredential) {
		res.Unverdicted = max(res.Unverdicted, len(answer)-cut)
	}
	return res, nil
}

// runDenyProbe sends the deny probe through the gateway at url, reads the
// whole stream and measures it.
func runDenyProbe(ctx context.Context, url string, sc scenario) (*DenyProbeResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	body, err := withModel(sc.request, denyProbeModel)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("deny probe: %w", err)
	}
	defer resp.Body.Close()
	// A cut stream is what a deny may look like: keep what was read.
	b, _ := io.ReadAll(resp.Body)
	res, err := checkDenyStream(sc.path, string(b), sc.upstream.withDenyProbe().deltaTexts())
	if err != nil {
		return nil, fmt.Errorf("deny probe: %w", err)
	}
	res.Status = resp.StatusCode
	return res, nil
}

// withDenyProbe is o answering the deny probe.
func (o upstreamOptions) withDenyProbe() upstreamOptions {
	o.denyProbe = true
	return o
}

// withModel is a compact JSON request with its model replaced.
func withModel(request []byte, model string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(request, &m); err != nil {
		return nil, fmt.Errorf("deny probe request: %w", err)
	}
	m["model"] = model
	return json.Marshal(m)
}
