package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/hooks-gateway/hooks-gateway/internal/agenttraffic"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/proxy"
)

// The agent scenarios send what coding agents send: a Codex Responses
// request carrying its whole history, a Claude Code Messages request with
// its system prompt and tool set, and a chat conversation growing turn by
// turn in one managed session (internal/agenttraffic builds them, from
// the captures in e2e/testdata for the first two). They run from the
// module root (go run ./bench), where e2e/testdata is.

// agentSize is the size the captured agent requests are grown to, with
// agentRounds tool rounds of code and shell output.
const (
	agentSize   = 84 << 10
	agentRounds = 40
	// agentSessions is how many managed sessions the *_managed scenarios
	// spread their requests over: at 100 req/s each gets a turn every
	// 100 ms, so no session has two in flight.
	agentSessions = 10
)

// The chat50 scenario's plan (see runGrowing). Both turns are measured
// at the same rate: CPU per request falls as the rate rises (fixed costs
// per wake-up), which would otherwise tilt turn 50 against turn 1.
const (
	growTurns       = 50
	growSessions    = 160 // sessions walked to turn 50, per round
	growRate        = 200 // turns 1 and 50, every target
	growFirstN      = 480 // turn-1 requests per target per round (fresh sessions for the managed gateway; the first growSessions are walked)
	growLastN       = 320 // turn-50 requests per target per round (the managed gateway: growSessions)
	growForwardRate = 480 // turns 2–49 of the managed sessions, not measured
	growSlices      = 3   // measurement slices per round (see runGrowing)
)

// agentScenarios are the agent-traffic scenarios, in report order.
func agentScenarios() []scenario {
	json1k := upstreamOptions{contentBytes: 1024, chunks: 200}
	codex, codexSkip := agentRequest(agenttraffic.CodexFixture, responsesPath, func(c []byte, rounds, size int) ([]byte, error) {
		return agenttraffic.Codex(c, rounds, size, sealItemID)
	})
	claude, claudeSkip := agentRequest(agenttraffic.ClaudeCodeFixture, messagesPath, agenttraffic.ClaudeCode)
	own := func(sc scenario) scenario {
		sc.rounds, sc.duration, sc.warmup = 2, 4*time.Second, time.Second
		return sc
	}
	codexDesc := fmt.Sprintf("Codex Responses request with its whole history (store: false; captured instructions and tools, %d tool rounds of code and shell output; %d bytes, not streamed); default policy", agentRounds, len(codex))
	claudeDesc := fmt.Sprintf("Claude Code Messages request (captured system prompt and tool set, %d tool rounds of code and shell output; %d bytes, not streamed); default policy", agentRounds, len(claude))
	managed := fmt.Sprintf(", the same request as the next turn of one of %d managed sessions (Agent-Hooks-Session, memory store)", agentSessions)
	return []scenario{
		own(scenario{name: "codex", description: codexDesc + ", per-request sessions",
			config: "default.yaml", path: responsesPath, rate: 100, request: codex, upstream: json1k, skip: codexSkip,
			check: expect(`"type":"output_text"`)}),
		own(scenario{name: "codex_managed", description: codexDesc + managed,
			config: "default.yaml", path: responsesPath, rate: 100, request: codex, upstream: json1k, skip: codexSkip,
			sessions: agentSessions, check: expect(`"type":"output_text"`)}),
		own(scenario{name: "claudecode", description: claudeDesc + ", per-request sessions",
			config: "messages.yaml", path: messagesPath, rate: 100, request: claude, upstream: json1k, skip: claudeSkip,
			check: expect(`"type":"text"`)}),
		own(scenario{name: "claudecode_managed", description: claudeDesc + managed,
			config: "messages.yaml", path: messagesPath, rate: 100, request: claude, upstream: json1k, skip: claudeSkip,
			sessions: agentSessions, check: expect(`"type":"text"`)}),
		{name: "chat50", description: fmt.Sprintf("chat conversation growing over %d turns in one managed session (%d sessions per round); turn 1 against turn %d; default policy", growTurns, growSessions, growTurns),
			config: "default.yaml", path: chatPath, upstream: json1k, rounds: 1, warmup: 500 * time.Millisecond,
			check: expect(`"chat.completion"`), run: runGrowing},
	}
}

// agentRequest grows the last captured request to path in fixture; when
// the capture cannot be read it says why, to skip the scenario.
func agentRequest(fixture, path string, grow func([]byte, int, int) ([]byte, error)) ([]byte, string) {
	capture, err := agenttraffic.LoadCapture(agenttraffic.CaptureDir, fixture, path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "no " + agenttraffic.CaptureDir + "/" + fixture + " (run the bench from the module root)"
		}
		return nil, err.Error()
	}
	b, err := grow(capture, agentRounds, agentSize)
	if err != nil {
		return nil, err.Error()
	}
	return b, ""
}

// The sealing key of configs/default.yaml: the bench sets its variable
// for the gateways it starts (setSealEnv) and seals the model-written
// item ids of the Codex history under it.
const (
	sealEnv    = "HOOKS_BENCH_SEAL"
	sealKeyID  = "bench"
	sealSecret = "hooks-gateway-bench-sealing-key-not-a-secret-0123456789abcdef"
)

// setSealEnv gives the gateway children the bench's sealing key.
func setSealEnv() error {
	if os.Getenv(sealEnv) == sealSecret {
		return nil
	}
	return os.Setenv(sealEnv, sealSecret)
}

// sealItemID is the gateway's seal of a Responses item id under the
// bench's key.
func sealItemID(id string) string {
	k, err := seal.New(seal.Key{ID: sealKeyID, Secret: []byte(sealSecret)})
	if err != nil {
		panic(err) // a fixed, valid key
	}
	return k.SealString(seal.Kind(agenttraffic.ItemIDSealKind), id)
}

// countPacer is a constant rate that stops after n hits.
type countPacer struct {
	vegeta.ConstantPacer
	n uint64
}

func (p countPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= p.n {
		return 0, true
	}
	return p.ConstantPacer.Pace(elapsed, hits)
}

// phaseResult is one target's measurement of one phase (turn 1, turn 50).
type phaseResult struct {
	atk            *attackResult
	cpu, upCPU     time.Duration
	mallocs, bytes float64
}

func (ph *phaseResult) add(r *attackResult, cpu, upCPU time.Duration, mallocs, bytes float64) {
	if ph.atk == nil {
		ph.atk = r
	} else {
		ph.atk.merge(r)
	}
	ph.cpu += cpu
	ph.upCPU += upCPU
	ph.mallocs += mallocs
	ph.bytes += bytes
}

// runGrowing is the chat50 scenario: a chat conversation whose turn k+1
// is turn k's history plus the assistant's answer and a new tool or user
// message. The stateless targets (direct, bare proxy, peers, the gateway
// with per-request sessions) are measured on turn 1's and turn 50's
// bodies; the gateway with managed sessions walks growSessions fresh
// sessions through all 50 turns each round and is measured on turn 1
// (growFirstN fresh sessions, the first growSessions of which go on) and
// on turn 50 (the walked sessions' last turn), turns 2–49 unmeasured.
// It reports turn 1 and turn 50 as two tables, and the gateway's CPU per
// request net of the bare proxy's on the same bytes, turn 50 over turn 1.
func runGrowing(ctx context.Context, sc scenario, p plan) ([]*ScenarioResult, error) {
	turns := agenttraffic.ChatTurns(growTurns, agenttraffic.ChatOutputBytes)
	first, last := turns[0], turns[growTurns-1]
	dir, cleanup, err := workDir(sc.name, p.keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	sc.request = first
	st, err := startStack(ctx, dir, sc, "")
	if err != nil {
		var skip *errSkip
		if errors.As(err, &skip) {
			return []*ScenarioResult{{Name: sc.name, Description: sc.description, Skipped: skip.why}}, nil
		}
		return nil, fmt.Errorf("%s: %w", sc.name, err)
	}
	defer st.stop()
	started, notes := startPeers(ctx, dir, st.upstream.url(), p.peers)
	defer func() {
		for _, sp := range started {
			sp.proc.stop()
		}
	}()

	// Each stateless target has its turn-1 and turn-50 requests.
	type growTarget struct {
		name        string
		proc        *child
		extra       []*child
		first, last []vegeta.Target
	}
	withBody := func(body []byte) scenario { s := sc; s.request = body; return s }
	mk := func(name string, proc *child, base string, extra ...*child) growTarget {
		return growTarget{name: name, proc: proc, extra: extra,
			first: requestsFor(withBody(first), base+sc.path), last: requestsFor(withBody(last), base+sc.path)}
	}
	stateless := []growTarget{mk("direct", st.upstream, st.upstream.url()), mk("bare proxy", st.bare, st.bare.url(), st.upstream)}
	for _, sp := range started {
		t1, t50 := peerTarget(withBody(first), sp, st.upstream), peerTarget(withBody(last), sp, st.upstream)
		if err := probe(ctx, t50, nil); err != nil {
			notes = append(notes, sp.name+" skipped: "+oneLine(err.Error()))
			continue
		}
		stateless = append(stateless, growTarget{name: sp.name, proc: sp.proc, extra: t1.extra, first: t1.reqs, last: t50.reqs})
	}
	stateless = append(stateless, mk("gateway, per-request sessions", st.gateway, st.gateway.url(), st.upstream))
	for _, t := range stateless {
		for _, reqs := range [][]vegeta.Target{t.first, t.last} {
			pt := &target{name: t.name, proc: t.proc, reqs: reqs}
			var check func(string) string
			if t.proc == st.gateway {
				check = sc.check
			}
			if err := probe(ctx, pt, check); err != nil {
				if t.proc == st.gateway {
					return []*ScenarioResult{{Name: sc.name, Description: sc.description, Skipped: err.Error()}}, nil
				}
				return nil, fmt.Errorf("%s: %w", sc.name, err)
			}
		}
	}

	gwURL := st.gateway.url() + sc.path
	// sessionTurn is turn k (1-based) of sessions [0, n) of round r, one
	// request per session.
	sessionTurn := func(r, k, n int) []vegeta.Target {
		ts := make([]vegeta.Target, n)
		for i := range ts {
			h := http.Header{"Content-Type": []string{"application/json"}}
			h.Set(proxy.HeaderSession, fmt.Sprintf("chat50-r%d-%04d", r, i))
			ts[i] = vegeta.Target{Method: http.MethodPost, URL: gwURL, Body: turns[k-1], Header: h}
		}
		return ts
	}
	atk := loadClient()
	paced := func(reqs []vegeta.Target, rate, n int) *attackResult {
		return attackPaced(atk, reqs, countPacer{ConstantPacer: vegeta.ConstantPacer{Freq: rate, Per: time.Second}, n: uint64(n)}, 0, false)
	}
	// measure runs one phase on one target and adds it to ph.
	measure := func(ph *phaseResult, proc *child, extra []*child, reqs []vegeta.Target, rate, n int, allocs bool) {
		c0, u0 := mustCPU(proc), 0*time.Second
		for _, e := range extra {
			u0 += mustCPU(e)
		}
		var m0, b0 float64
		if allocs {
			m0, b0 = gatewayAllocs(ctx, st.gateway)
		}
		r := paced(reqs, rate, n)
		c1, u1 := mustCPU(proc), 0*time.Second
		for _, e := range extra {
			u1 += mustCPU(e)
		}
		var m1, b1 float64
		if allocs {
			m1, b1 = gatewayAllocs(ctx, st.gateway)
		}
		ph.add(r, c1-c0, u1-u0, m1-m0, b1-b0)
	}

	// Warm-up: every stateless target both turns, the managed gateway a
	// throwaway round's first turns.
	warmN := func(rate int) int { return max(1, int(p.warmup.Seconds()*float64(rate))) }
	for _, t := range stateless {
		paced(t.first, growRate, warmN(growRate))
		paced(t.last, growRate, warmN(growRate))
	}
	paced(sessionTurn(-1, 1, warmN(growRate)), growRate, warmN(growRate))

	n := len(stateless)
	byTurn := make([]time.Duration, growTurns)                          // the managed gateway's CPU on turns 2–49
	firsts, lasts := make([]phaseResult, n+1), make([]phaseResult, n+1) // the managed gateway last
	// Each round measures in growSlices slices, the targets in turn
	// within each, so the machine's drift over the round hits them alike:
	// all but the last slice before the walk, the last one after the
	// managed turn 50. The managed turn 1 of each slice opens fresh
	// sessions; the first slice's first growSessions are walked.
	up := []*child{st.upstream}
	slice := func(r, s int) error {
		for i, t := range stateless {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			gw := t.proc == st.gateway
			measure(&firsts[i], t.proc, t.extra, t.first, growRate, growFirstN/growSlices, gw)
			measure(&lasts[i], t.proc, t.extra, t.last, growRate, growLastN/growSlices, gw)
		}
		fresh := sessionTurn(r, 1, growFirstN)[s*growFirstN/growSlices : (s+1)*growFirstN/growSlices]
		measure(&firsts[n], st.gateway, up, fresh, growRate, len(fresh), true)
		return nil
	}
	for r := range p.rounds {
		for s := range growSlices - 1 {
			if err := slice(r, s); err != nil {
				return nil, err
			}
		}
		for k := 2; k < growTurns; k++ {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			c0 := mustCPU(st.gateway)
			if res := paced(sessionTurn(r, k, growSessions), growForwardRate, growSessions); res.errors > 0 {
				return nil, fmt.Errorf("%s: turn %d of the managed sessions: %s", sc.name, k, res.errorSummary())
			}
			byTurn[k-1] += mustCPU(st.gateway) - c0
		}
		measure(&lasts[n], st.gateway, up, sessionTurn(r, growTurns, growSessions), growRate, growSessions, true)
		if err := slice(r, growSlices-1); err != nil {
			return nil, err
		}
	}

	names := make([]string, 0, n+1)
	for _, t := range stateless {
		names = append(names, t.name)
	}
	names = append(names, "gateway, managed session")
	extras := func(i int) bool { return i > 0 }
	build := func(label string, rate, size int, phases []phaseResult) *ScenarioResult {
		res := &ScenarioResult{Name: fmt.Sprintf("%s turn %s", sc.name, label), Rate: rate,
			Description: fmt.Sprintf("%s: turn %s (%d bytes)", sc.description, label, size), Notes: append([]string{}, notes...)}
		for i, ph := range phases {
			tr := TargetResult{Name: names[i], Requests: ph.atk.requests, Errors: ph.atk.errors, ErrorKinds: ph.atk.errorSummary(),
				Rate: ph.atk.sendRate(), Latency: summarize(ph.atk.latencies), CPUPer1k: per1k(ph.cpu, ph.atk.requests)}
			if extras(i) {
				tr.UpstreamCPUPer1k = per1k(ph.upCPU, ph.atk.requests)
			}
			if i < n {
				tr.PeakRSS = treePeakRSS(stateless[i].proc.pid())
			} else {
				tr.PeakRSS = treePeakRSS(st.gateway.pid())
			}
			res.Targets = append(res.Targets, tr)
		}
		compare(res)
		if gw := res.gatewayOf(); gw.Requests > 0 {
			res.AllocsPerReq = phases[n].mallocs / float64(gw.Requests)
			res.AllocBytesPerReq = phases[n].bytes / float64(gw.Requests)
		}
		return res
	}
	plan := fmt.Sprintf("plan: %d round(s); per target and round, in %d slices with the targets in turn, turn 1: %d requests at %d req/s, turn %d: %d at %d req/s (the managed gateway: its %d walked sessions' last turn, after turns 2–%d at %d req/s, not measured, between the last two slices); %s warm-up",
		p.rounds, growSlices, growFirstN, growRate, growTurns, growLastN, growRate, growSessions, growTurns-1, growForwardRate, p.warmup)
	notes = append([]string{plan}, notes...)
	r1 := build("1", growRate, len(first), firsts)
	r50 := build(fmt.Sprint(growTurns), growRate, len(last), lasts)
	// Net of the bare proxy: what the gateway spends beyond moving the
	// same bytes, turn 50 over turn 1.
	net := func(res *ScenarioResult, i int) float64 { return res.Targets[i].CPUPer1k - res.Targets[1].CPUPer1k }
	for _, i := range []int{n, n - 1} {
		g1, g50 := net(r1, i), net(r50, i)
		ratio := "–"
		if g1 > 0 {
			ratio = fmt.Sprintf("%.2f×", g50/g1)
		}
		r50.Notes = append(r50.Notes, fmt.Sprintf("%s, CPU ms / request net of the bare proxy's: turn 1 %.3f, turn %d %.3f: turn %d costs %s turn 1",
			names[i], g1, growTurns, g50, growTurns, ratio))
	}
	r50.Growth = &Growth{Turns: growTurns, FirstNet: net(r1, n), LastNet: net(r50, n),
		FirstNetPerRequest: net(r1, n-1), LastNetPerRequest: net(r50, n-1)}
	// The walk's own turns, gross (no bare proxy ran them), at the
	// forward rate: how the managed gateway's cost grows along the way.
	r50.Growth.ByTurn = make([]float64, growTurns)
	r50.Growth.ByTurn[0], r50.Growth.ByTurn[growTurns-1] = r1.gatewayOf().CPUPer1k, r50.gatewayOf().CPUPer1k
	walk := fmt.Sprintf("gateway, managed session, CPU ms / request along the walk (gross; turns 2–%d at %d req/s):", growTurns-1, growForwardRate)
	for k := 2; k < growTurns; k++ {
		r50.Growth.ByTurn[k-1] = per1k(byTurn[k-1], growSessions*p.rounds)
	}
	for _, k := range []int{1, 10, 20, 30, 40, growTurns} {
		walk += fmt.Sprintf(" turn %d %.3f (%d bytes);", k, r50.Growth.ByTurn[k-1], len(turns[k-1]))
	}
	r50.Notes = append(r50.Notes, strings.TrimSuffix(walk, ";"))
	if r50.Growth.FirstNet > 0 {
		r50.Growth.Ratio = r50.Growth.LastNet / r50.Growth.FirstNet
	}
	if r50.Growth.FirstNetPerRequest > 0 {
		r50.Growth.RatioPerRequest = r50.Growth.LastNetPerRequest / r50.Growth.FirstNetPerRequest
	}
	return []*ScenarioResult{r1, r50}, nil
}

// Growth is the chat50 scenario's summary: the gateway's CPU ms per
// request net of the bare proxy's on the same bytes, on the first and
// last turn, in managed sessions and per-request.
type Growth struct {
	Turns              int     `json:"turns"`
	FirstNet           float64 `json:"managed_first_turn_net_cpu_ms"`
	LastNet            float64 `json:"managed_last_turn_net_cpu_ms"`
	Ratio              float64 `json:"managed_last_over_first"`
	FirstNetPerRequest float64 `json:"per_request_first_turn_net_cpu_ms"`
	LastNetPerRequest  float64 `json:"per_request_last_turn_net_cpu_ms"`
	RatioPerRequest    float64 `json:"per_request_last_over_first"`
	// ByTurn is the managed gateway's gross CPU ms per request on each
	// turn (turns 2–49 from the unmeasured walk, at its rate).
	ByTurn []float64 `json:"managed_cpu_ms_by_turn"`
}
