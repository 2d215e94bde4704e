package enforcement

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

func nested(depth int, leaf any) any {
	v := leaf
	for i := 0; i < depth; i++ {
		v = []any{v}
	}
	return v
}

// withTarget returns a pre_tool_call context whose arguments are args.
func withTarget(t testing.TB, args any) Context {
	t.Helper()
	c := buildAt(t, nil, PreToolCall)
	c["tool_call"].(map[string]any)["args"] = args
	c["target"] = args
	return c
}

// TestContextBounds: a context over the size or depth bound is denied
// host_error:context_invalid before dispatch; the message names the limit,
// never the content; nothing panics, not even on a cyclic value.
func TestContextBounds(t *testing.T) {
	big := strings.Repeat(secret, 2048/len(secret)+1)
	cyclic := map[string]any{"k": secret}
	cyclic["self"] = cyclic
	cases := []struct {
		name  string
		opts  Options
		args  any
		limit string // must appear in the message
	}{
		{"size", Options{MaxContextBytes: 1024}, map[string]any{"blob": big}, "1024 bytes"},
		{"depth", Options{MaxDepth: 16}, map[string]any{"deep": nested(20, secret)}, "16 levels"},
		{"default-size", Options{}, map[string]any{"blob": strings.Repeat("x", DefaultMaxContextBytes)}, strconv.Itoa(DefaultMaxContextBytes) + " bytes"},
		{"default-depth", Options{}, map[string]any{"deep": nested(DefaultMaxDepth, secret)}, "128 levels"},
		{"unbounded-cycle", Options{MaxContextBytes: -1, MaxDepth: -1}, cyclic, "levels"},
		{"unbounded-deep", Options{MaxContextBytes: -1, MaxDepth: -1}, nested(20000, secret), "levels"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			intercept, calls := countingReg()
			tc.opts.Interceptors = []Registration{intercept}
			e := newTestEmitter(t, tc.opts)
			out, err := e.Emit(context.Background(), withTarget(t, tc.args))
			if err == nil || out.Proceed {
				t.Fatal("an oversized context must block")
			}
			r := out.Record
			if r.Verdict.Reason != ReasonContextInvalid || r.InputIdentity != nil || r.DecidedBy != nil || len(r.Verdicts) != 0 {
				t.Fatalf("record %+v", r)
			}
			if calls.Load() != 0 {
				t.Fatal("interceptor called for a rejected context")
			}
			msg := r.Verdict.Message
			if !strings.Contains(msg, tc.limit) || strings.Contains(msg, secret) || strings.Contains(msg, "xxxx") {
				t.Fatalf("message %q: want the limit %q and no content", msg, tc.limit)
			}
		})
	}
	// Levels: root 1, tool_call 2, args 3, deep 4; n arrays put the leaf at 4+n.
	for _, n := range []int{12, 13} {
		e := newTestEmitter(t, Options{Interceptors: []Registration{allowReg()}, MaxDepth: 16})
		_, err := e.Emit(context.Background(), withTarget(t, map[string]any{"deep": nested(n, "x")}))
		if (err == nil) != (4+n <= 16) {
			t.Errorf("leaf at level %d with MaxDepth 16: err %v", 4+n, err)
		}
	}
}

// TestEnvelopeRejection: envelope failures are denied before dispatch and
// the record keeps what is known (sequence -1, session "" when unknown).
func TestEnvelopeRejection(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(Context)
		seq     int64
		session string
	}{
		{"missing-target", func(c Context) { delete(c, "target") }, 0, "sess-1"},
		{"float-sequence", func(c Context) { c["sequence"] = json.Number("0.0") }, -1, "sess-1"},
		{"no-session", func(c Context) { delete(c, "session") }, 0, ""},
		{"bad-framework", func(c Context) { c["agent"].(map[string]any)["framework"] = "Bad FW" }, 0, "sess-1"},
		{"missing-conditional", func(c Context) { delete(c, "tool_call") }, 0, "sess-1"},
		{"missing-subfield", func(c Context) { delete(c["tool_call"].(map[string]any), "name") }, 0, "sess-1"},
		{"unknown-point", func(c Context) { c["interception_point"] = "pre_lunch" }, 0, "sess-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			intercept, calls := countingReg()
			e := newTestEmitter(t, Options{Interceptors: []Registration{intercept}})
			c := buildAt(t, nil, PreToolCall)
			tc.mutate(c)
			out, _ := e.EmitUnchecked(context.Background(), c)
			r := out.Record
			if r.Verdict.Reason != ReasonContextInvalid || r.InputIdentity != nil || r.EnforcedIdentity != nil || calls.Load() != 0 {
				t.Fatalf("record %+v calls %d", r, calls.Load())
			}
			if r.Sequence != tc.seq || r.SessionID != tc.session || out.Proceed {
				t.Fatalf("sequence %d session %q proceed %v", r.Sequence, r.SessionID, out.Proceed)
			}
		})
	}
}

// TestNoInterceptor: zero interceptors deny in both modes (§7), recorded
// with decided_by null and no verdicts.
func TestNoInterceptor(t *testing.T) {
	for _, mode := range []Mode{Enforce, EvaluateOnly} {
		e := newTestEmitter(t, Options{Mode: mode})
		out, err := e.Emit(context.Background(), buildAt(t, nil, Input))
		r := out.Record
		if r.Verdict.Reason != ReasonNoInterceptor || r.DecidedBy != nil || r.Verdicts != nil || r.InputIdentity == nil {
			t.Fatalf("%s: record %+v", mode, r)
		}
		if (err == nil) != (mode == EvaluateOnly) || out.Proceed != (mode == EvaluateOnly) {
			t.Fatalf("%s: err %v proceed %v", mode, err, out.Proceed)
		}
	}
}

// TestSinkFailuresAndBuffer: sink errors and panics are counted and never
// change the verdict; the bounded buffer keeps the newest records in order.
func TestSinkFailuresAndBuffer(t *testing.T) {
	var writes atomic.Int64
	sink := RecordSinkFunc(func(_ context.Context, r *Record) error {
		switch writes.Add(1) % 3 {
		case 1:
			return errors.New("disk full")
		case 2:
			panic("sink bug")
		}
		return nil
	})
	e := newTestEmitter(t, Options{
		Interceptors: []Registration{reg("", func(_ context.Context, c Context) (Verdict, error) {
			if c.Point() == Output {
				return Deny("test:no", ""), nil
			}
			return Allow(), nil
		})},
		Sink:         sink,
		RecordBuffer: 3,
	})
	b := newTestBuilder()
	points := []Point{Input, PreModelCall, Output, PostModelCall, Output}
	for i, p := range points {
		out, err := e.Emit(context.Background(), buildAt(t, b, p))
		wantDeny := p == Output
		if (err != nil) != wantDeny || out.Proceed == wantDeny {
			t.Fatalf("emission %d (%s): err %v proceed %v", i, p, err, out.Proceed)
		}
	}
	if got := e.SinkFailures(); got != 4 {
		t.Fatalf("SinkFailures = %d, want 4 (2 errors, 2 panics)", got)
	}
	recs := e.TakeRecords()
	if e.RecordsDropped() != 2 || len(recs) != 3 {
		t.Fatalf("dropped %d, kept %d; want 2 and 3", e.RecordsDropped(), len(recs))
	}
	for i, r := range recs {
		if r.Sequence != int64(i+2) {
			t.Fatalf("kept sequences %d at %d, want 2,3,4 in order", r.Sequence, i)
		}
	}
	if len(e.TakeRecords()) != 0 {
		t.Fatal("TakeRecords did not clear the buffer")
	}
	// The drained ring keeps working from its start.
	for _, p := range []Point{Input, Input} {
		_, _ = e.Emit(context.Background(), buildAt(t, b, p))
	}
	if recs := e.TakeRecords(); len(recs) != 2 || recs[0].Sequence != 5 || recs[1].Sequence != 6 || e.RecordsDropped() != 2 {
		t.Fatalf("after drain: %d records, dropped %d", len(recs), e.RecordsDropped())
	}
}

// TestSinkSeesCompleteRecordWithoutCancel: the sink runs even when the
// caller's context is cancelled, and its context is not cancelled.
func TestSinkSeesCompleteRecordWithoutCancel(t *testing.T) {
	var sinkErr error
	e := newTestEmitter(t, Options{
		Interceptors: []Registration{allowReg()},
		Sink: RecordSinkFunc(func(ctx context.Context, _ *Record) error {
			sinkErr = ctx.Err()
			return nil
		}),
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = e.Emit(ctx, buildAt(t, nil, Input))
	if sinkErr != nil {
		t.Fatalf("sink context: %v", sinkErr)
	}
}

// TestProjectionFailureRecord: a NaN field fails Build with a
// *ProjectionError that consumed a sequence number; RecordHostFailure turns
// it into the §10.3 host-projection-failure record.
func TestProjectionFailureRecord(t *testing.T) {
	for _, tc := range []struct {
		name     string
		identity *IdentityProvider
		provider any
	}{
		{"jcs-sha256", nil, IdentityJCSSHA256},
		{"custom", customProvider(t), "hmac-sha256-k1"},
		{"null", &IdentityProvider{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &collectSink{}
			intercept, calls := countingReg()
			e := newTestEmitter(t, Options{
				Interceptors: []Registration{intercept, allowReg()},
				Identity:     tc.identity,
				Sink:         sink,
				RecordBuffer: 4,
				PointModes:   map[Point]Mode{PostToolCall: EvaluateOnly},
			})
			b := newTestBuilder()
			if _, err := b.Build(context.Background(), PreToolCall, pointFields(PreToolCall)); err != nil {
				t.Fatal(err)
			}
			_, err := b.Build(context.Background(), PostToolCall,
				PostToolFields(ToolCall{ID: "tc-1", Name: "fetch"}, map[string]any{"score": math.NaN(), "note": secret}, false))
			var pe *ProjectionError
			if !errors.As(err, &pe) {
				t.Fatalf("Build error = %v, want *ProjectionError", err)
			}
			if pe.Sequence != 1 || pe.SessionID != "sess-1" || pe.Point != PostToolCall || pe.Timestamp == "" {
				t.Fatalf("ProjectionError %+v", pe)
			}
			if next := buildAt(t, b, Output); next.Sequence() != 2 {
				t.Fatalf("next sequence %d, want 2: the failed build consumed 1", next.Sequence())
			}

			r := e.RecordHostFailure(context.Background(), pe.HostFailure())
			if r.Verdict.Decision != DecisionDeny || r.Verdict.Reason != ReasonContextInvalid {
				t.Fatalf("verdict %+v", r.Verdict)
			}
			if r.Sequence != 1 || r.Mode != EvaluateOnly || r.InterceptorsRegistered != 2 || calls.Load() != 0 {
				t.Fatalf("record %+v calls %d", r, calls.Load())
			}
			if recs := sink.records(); len(recs) != 1 || recs[0] != r {
				t.Fatal("host-failure record not delivered to the sink")
			}
			if recs := e.TakeRecords(); len(recs) != 1 || recs[0] != r {
				t.Fatal("host-failure record not buffered")
			}
			wire, raw := recordWire(t, r)
			for _, k := range []string{`"input_identity":null`, `"enforced_identity":null`, `"decided_by":null`} {
				if !strings.Contains(string(raw), k) {
					t.Errorf("record lacks %s: %s", k, raw)
				}
			}
			if wire["identity_provider"] != tc.provider {
				t.Errorf("identity_provider = %v, want %v", wire["identity_provider"], tc.provider)
			}
			for _, k := range []string{"verdicts", "fold_truncated", "resolved_by", "trace"} {
				if _, ok := wire[k]; ok {
					t.Errorf("record has %q: %s", k, raw)
				}
			}
			if wire["timestamp"] != pe.Timestamp || wire["session_id"] != "sess-1" {
				t.Errorf("envelope members lost: %s", raw)
			}
			if strings.Contains(string(raw), secret) || !strings.Contains(string(raw), "tool_result: jsonvalue: $.value{member 1}") {
				t.Errorf("message must name the path, not the content: %s", raw)
			}
			validateRecordSchema(t, wire)
		})
	}
	t.Run("unknown-sequence", func(t *testing.T) {
		e := newTestEmitter(t, Options{})
		r := e.RecordHostFailure(context.Background(), HostFailure{Point: Input, Sequence: -1, Message: "adapter conversion failed"})
		wire, raw := recordWire(t, r)
		if _, ok := wire["timestamp"]; ok || wire["sequence"] != json.Number("-1") || wire["session_id"] != "" || r.Mode != Enforce {
			t.Fatalf("record %s", raw)
		}
	})
}

func customProvider(t testing.TB) *IdentityProvider {
	t.Helper()
	p, err := NewIdentityProvider("hmac-sha256-k1", func(c Context) (string, error) { return "hmac:fixed", nil })
	if err != nil {
		t.Fatal(err)
	}
	return &p
}

// TestTargetValidators: a host write-back check that rejects the
// transformed target makes the combined verdict deny transform_invalid with
// decided_by null and nothing applied; an accepting one lets it apply.
func TestTargetValidators(t *testing.T) {
	transform := verdictReg(TransformTo("$target[0].content", "[redacted]"))
	for _, tc := range []struct {
		name   string
		reject bool
	}{{"rejects", true}, {"accepts", false}} {
		t.Run(tc.name, func(t *testing.T) {
			var seen []any
			e := newTestEmitter(t, Options{
				Interceptors: []Registration{allowReg(), transform},
				TargetValidators: map[Point]TargetValidator{
					PreModelCall: func(target any) error {
						seen = append(seen, target)
						if tc.reject {
							return errors.New("cannot encode message 0")
						}
						return nil
					},
					Output: func(any) error { t.Error("validator of another point ran"); return nil },
				},
			})
			c := buildAt(t, nil, PreModelCall)
			orig := jsonvalue.DeepCopy(map[string]any(c))
			out, err := e.Emit(context.Background(), c)
			if len(seen) != 1 || seen[0].([]any)[0].(map[string]any)["content"] != "[redacted]" {
				t.Fatalf("validator saw %v, want the transformed target", seen)
			}
			r := out.Record
			if tc.reject {
				if err == nil || out.Proceed || r.Verdict.Reason != ReasonTransformInvalid || r.DecidedBy != nil {
					t.Fatalf("verdict %+v decided_by %v", r.Verdict, derefInt(r.DecidedBy))
				}
				if !jsonEqual(map[string]any(out.Context), orig) {
					t.Fatal("rejected transform reached the outcome context")
				}
				return
			}
			if err != nil || r.Verdict.Decision != DecisionTransform || derefInt(r.DecidedBy) != 1 {
				t.Fatalf("err %v verdict %+v", err, r.Verdict)
			}
			msgs := out.Context["messages"].([]any)
			if msgs[0].(map[string]any)["content"] != "[redacted]" || !jsonEqual(out.Context["messages"], out.Target()) {
				t.Fatal("accepted transform not applied and written back")
			}
			if !jsonEqual(map[string]any(c), orig) {
				t.Fatal("the caller's context was modified in place")
			}
			if *r.EnforcedIdentity != mustIdentity(t, out.Context) || *r.EnforcedIdentity == *r.InputIdentity {
				t.Fatal("enforced identity does not bind the transformed context")
			}
		})
	}
	t.Run("allow-skips-validator", func(t *testing.T) {
		e := newTestEmitter(t, Options{
			Interceptors:     []Registration{allowReg()},
			TargetValidators: map[Point]TargetValidator{PreModelCall: func(any) error { return errors.New("no") }},
		})
		if _, err := e.Emit(context.Background(), buildAt(t, nil, PreModelCall)); err != nil {
			t.Fatal(err)
		}
	})
}

// mutator tampers with every level of the copy it receives, the way the
// CTK's "mutate" fault does, and reports whether what it saw was pristine.
func mutator(want map[string]any, sawOriginal *atomic.Int64) Registration {
	return reg("", func(_ context.Context, c Context) (Verdict, error) {
		if jsonEqual(map[string]any(c), want) {
			sawOriginal.Add(1)
		}
		c["target"] = "TAMPERED"
		tc := c["tool_call"].(map[string]any)
		tc["args"].(map[string]any)["url"] = "https://evil.example"
		tc["extra"] = []any{1}
		c["session"].(map[string]any)["id"] = "other"
		delete(c, "agent")
		return Allow(), nil
	})
}

// TestInterceptorIsolation: in-place mutation of an interceptor's copy
// never reaches the outcome, the identities or a sibling (§7), in the
// sequential and the parallel profiles.
func TestInterceptorIsolation(t *testing.T) {
	for _, profile := range []Profile{SequentialFirstDeny, SequentialRunAll, ParallelStrictest, ParallelUnanimous} {
		t.Run(string(profile), func(t *testing.T) {
			c := buildAt(t, nil, PreToolCall)
			orig := jsonvalue.DeepCopy(map[string]any(c)).(map[string]any)
			var pristine atomic.Int64
			e := newTestEmitter(t, Options{
				Interceptors: []Registration{mutator(orig, &pristine), mutator(orig, &pristine), mutator(orig, &pristine)},
				Composition:  Composition{Profile: profile},
			})
			out, err := e.Emit(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if pristine.Load() != 3 {
				t.Fatalf("%d of 3 interceptors saw the original context", pristine.Load())
			}
			if !jsonEqual(map[string]any(out.Context), orig) || !jsonEqual(map[string]any(c), orig) {
				t.Fatal("mutation reached the outcome or the caller's context")
			}
			want := mustIdentity(t, Context(orig))
			if *out.Record.InputIdentity != want || *out.Record.EnforcedIdentity != want {
				t.Fatal("mutation changed the identities")
			}
		})
	}
}

// TestReturnedVerdictNotAliased: an interceptor or resolver that keeps and
// mutates the transform value or evidence it returned after Emit cannot
// change the outcome context, the outcome verdict, the identities or the
// record.
func TestReturnedVerdictNotAliased(t *testing.T) {
	type kept struct {
		value map[string]any
		ev    *Evidence
	}
	fresh := func() kept {
		return kept{
			value: map[string]any{"url": "https://safe.example", "tags": []any{"a"}},
			ev:    &Evidence{Artefact: strp("sha256:aa"), VerificationPointers: map[string]string{"log": "https://audit.example"}},
		}
	}
	mutate := func(k kept) {
		k.value["url"] = "https://evil.example"
		k.value["tags"].([]any)[0] = "z"
		k.value["new"] = true
		*k.ev.Artefact = "sha256:forged"
		k.ev.VerificationPointers["log"] = "https://forged.example"
	}
	cases := []struct {
		name string
		opts func(k kept) Options
	}{
		{"first_deny", func(k kept) Options {
			v := TransformTo("$target", k.value)
			v.Evidence = k.ev
			return Options{Interceptors: []Registration{verdictReg(v)}}
		}},
		{"strictest", func(k kept) Options {
			v := TransformTo("$target", k.value)
			v.Evidence = k.ev
			return Options{Interceptors: []Registration{verdictReg(v), allowReg()}, Composition: Composition{Profile: ParallelStrictest}}
		}},
		{"resolver", func(k kept) Options {
			v := TransformTo("$target", k.value)
			v.Evidence = k.ev
			return Options{Interceptors: []Registration{verdictReg(Escalate("test:ask", ""))}, Resolver: echoResolver(OutcomeApprove, &v)}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := fresh()
			e := newTestEmitter(t, tc.opts(k))
			out, err := e.Emit(context.Background(), buildAt(t, nil, PreToolCall))
			if err != nil {
				t.Fatal(err)
			}
			ctxBefore := jsonvalue.DeepCopy(map[string]any(out.Context))
			_, recBefore := recordWire(t, out.Record)
			enforced := *out.Record.EnforcedIdentity

			mutate(k)

			if !jsonEqual(map[string]any(out.Context), ctxBefore) {
				t.Error("the kept transform value aliases the outcome context")
			}
			if tv := out.Verdict.Transform.Value.(map[string]any); tv["url"] != "https://safe.example" || len(tv) != 2 {
				t.Errorf("the kept transform value aliases the outcome verdict: %v", tv)
			}
			if _, recAfter := recordWire(t, out.Record); string(recAfter) != string(recBefore) {
				t.Errorf("the record changed after the fact:\n%s\n%s", recBefore, recAfter)
			}
			if mustIdentity(t, out.Context) != enforced {
				t.Error("enforced identity no longer matches the outcome context")
			}
		})
	}
}

// TestEvaluateOnly: selected through Options.Mode, PointModes or WithMode,
// evaluate_only records verdicts, proceeds, validates transforms without
// applying them and never consults the approval seam (§8).
func TestEvaluateOnly(t *testing.T) {
	var resolverCalls atomic.Int64
	resolver := ApprovalResolverFunc(func(_ context.Context, req ApprovalRequest) (ApprovalResolution, error) {
		resolverCalls.Add(1)
		return ApprovalResolution{Outcome: OutcomeApprove, ContextIdentity: req.ContextIdentity, Verdict: &Verdict{Decision: DecisionAllow}}, nil
	})
	selectors := []struct {
		name string
		opts Options
		emit []EmitOption
	}{
		{"Options.Mode", Options{Mode: EvaluateOnly}, nil},
		{"PointModes", Options{PointModes: map[Point]Mode{PreToolCall: EvaluateOnly}}, nil},
		{"WithMode", Options{}, []EmitOption{WithMode(EvaluateOnly)}},
	}
	verdicts := []struct {
		name     string
		v        Verdict
		decision Decision
		reason   string
	}{
		{"deny", Deny("test:no", "blocked"), DecisionDeny, "test:no"},
		{"escalate", Escalate("test:ask", ""), DecisionDeny, "test:ask"},
		{"transform", TransformTo("$target.url", "https://safe.example"), DecisionTransform, ""},
		{"transform-missing-path", TransformTo("$target.missing.deep", 1), DecisionDeny, ReasonTransformInvalid},
		{"transform-bad-root", TransformTo("$context.x", 1), DecisionDeny, ReasonTransformTargetForbidden},
	}
	for _, sel := range selectors {
		for _, vc := range verdicts {
			t.Run(sel.name+"/"+vc.name, func(t *testing.T) {
				opts := sel.opts
				opts.Interceptors = []Registration{verdictReg(vc.v), allowReg()}
				opts.Resolver = resolver
				e := newTestEmitter(t, opts)
				before := resolverCalls.Load()
				c := buildAt(t, nil, PreToolCall)
				orig := jsonvalue.DeepCopy(map[string]any(c))
				out, err := e.Emit(context.Background(), c, sel.emit...)
				if err != nil || !out.Proceed || out.Mode != EvaluateOnly {
					t.Fatalf("err %v proceed %v mode %s", err, out.Proceed, out.Mode)
				}
				r := out.Record
				if r.Mode != EvaluateOnly || r.Verdict.Decision != vc.decision || r.Verdict.Reason != vc.reason {
					t.Fatalf("record mode %s verdict %s %s", r.Mode, r.Verdict.Decision, r.Verdict.Reason)
				}
				if !jsonEqual(map[string]any(out.Context), orig) || *r.EnforcedIdentity != *r.InputIdentity {
					t.Fatal("evaluate_only applied a transform")
				}
				if resolverCalls.Load() != before || r.ResolvedBy != "" {
					t.Fatal("evaluate_only consulted the approval seam")
				}
			})
		}
	}
	t.Run("scoping", func(t *testing.T) {
		deny := verdictReg(Deny("test:no", ""))
		e := newTestEmitter(t, Options{Interceptors: []Registration{deny}, PointModes: map[Point]Mode{PreToolCall: EvaluateOnly}})
		if _, err := e.Emit(context.Background(), buildAt(t, nil, Output)); err == nil {
			t.Fatal("PointModes leaked to another point")
		}
		if e.ModeFor(Output) != Enforce || e.ModeFor(PreToolCall) != EvaluateOnly {
			t.Fatal("ModeFor")
		}
		e = newTestEmitter(t, Options{Interceptors: []Registration{deny}, Mode: EvaluateOnly})
		if out, err := e.Emit(context.Background(), buildAt(t, nil, Output), WithMode(Enforce)); err == nil || out.Record.Mode != Enforce {
			t.Fatal("WithMode(Enforce) did not override the default")
		}
	})
	t.Run("invalid-mode", func(t *testing.T) {
		if _, err := NewEmitter(Options{Mode: "audit"}); err == nil {
			t.Fatal("unknown mode accepted")
		}
		if _, err := NewEmitter(Options{PointModes: map[Point]Mode{"nowhere": Enforce}}); err == nil {
			t.Fatal("unknown point accepted")
		}
	})
}

// TestShutdownNeverConsults: a liftable deny at agent_shutdown is recorded
// as is; the resolver is never called (§6.1a).
func TestShutdownNeverConsults(t *testing.T) {
	e := newTestEmitter(t, Options{
		Interceptors: []Registration{verdictReg(Escalate("test:ask", ""))},
		Resolver: ApprovalResolverFunc(func(context.Context, ApprovalRequest) (ApprovalResolution, error) {
			t.Error("resolver consulted at agent_shutdown")
			return ApprovalResolution{}, nil
		}),
	})
	out, err := e.EmitUnchecked(context.Background(), buildAt(t, nil, AgentShutdown))
	if err != nil || out.Proceed || out.Record.ResolvedBy != "" || out.Record.Verdict.Approval == nil {
		t.Fatalf("err %v record %+v", err, out.Record)
	}
}

// TestRefuse: a host-synthesized deny is recorded like an emission (checks,
// identities, sink and buffer) without running an interceptor or the seam.
func TestRefuse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(Context)
		opts    []EmitOption
		reason  string
		proceed bool
	}{
		{"enforce", nil, nil, ReasonStreamingUnsupported, false},
		{"evaluate-only", nil, []EmitOption{WithMode(EvaluateOnly)}, ReasonStreamingUnsupported, true},
		{"invalid-context", func(c Context) { delete(c, "response") }, nil, ReasonContextInvalid, false},
		{"out-of-domain", func(c Context) { c["response"].(map[string]any)["content"] = json.Number("9007199254740993") }, nil, ReasonContextInvalid, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			intercept, calls := countingReg()
			sink := &collectSink{}
			e := newTestEmitter(t, Options{
				Interceptors: []Registration{intercept},
				Composition:  Composition{Profile: SequentialRunAll},
				Resolver: ApprovalResolverFunc(func(context.Context, ApprovalRequest) (ApprovalResolution, error) {
					t.Error("Refuse consulted the approval seam")
					return ApprovalResolution{}, nil
				}),
				Sink:         sink,
				RecordBuffer: 2,
			})
			c := buildAt(t, nil, PostModelCall)
			c["response"].(map[string]any)["finish_reason"] = "stream_incomplete"
			c["target"] = c["response"]
			if tc.mutate != nil {
				tc.mutate(c)
			}
			out := e.Refuse(context.Background(), c, ReasonStreamingUnsupported, "stream_incomplete", tc.opts...)
			r := out.Record
			if r.Verdict.Decision != DecisionDeny || r.Verdict.Reason != tc.reason || out.Proceed != tc.proceed || calls.Load() != 0 {
				t.Fatalf("verdict %s %s proceed %v calls %d", r.Verdict.Decision, r.Verdict.Reason, out.Proceed, calls.Load())
			}
			valid := tc.reason != ReasonContextInvalid
			if (r.InputIdentity != nil) != valid || (r.EnforcedIdentity != nil) != valid || r.DecidedBy != nil || len(r.Verdicts) != 0 {
				t.Fatalf("record %+v", r)
			}
			if valid && *r.InputIdentity != mustIdentity(t, c) {
				t.Fatal("identity does not bind the refused context")
			}
			if recs := sink.records(); len(recs) != 1 || recs[0] != r || len(e.TakeRecords()) != 1 {
				t.Fatal("record not delivered to sink and buffer")
			}
			wire, _ := recordWire(t, r)
			validateRecordSchema(t, wire)
		})
	}
}

// TestPerEmissionTargetValidator: WithTargetValidator runs after the
// point's configured validator, only for an applied transform, and its
// rejection is the same decided_by-null transform_invalid deny.
func TestPerEmissionTargetValidator(t *testing.T) {
	transform := verdictReg(TransformTo("$target.content", "[redacted]"))
	for _, tc := range []struct {
		name              string
		regs              []Registration
		configured, local error
		wantOrder         string
		wantReason        string
	}{
		{"both-accept", []Registration{transform}, nil, nil, "configured,local", ""},
		{"local-rejects", []Registration{transform}, nil, errors.New("no"), "configured,local", ReasonTransformInvalid},
		{"configured-rejects", []Registration{transform}, errors.New("no"), nil, "configured", ReasonTransformInvalid},
		{"no-transform", []Registration{allowReg()}, errors.New("no"), errors.New("no"), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var order []string
			e := newTestEmitter(t, Options{
				Interceptors: tc.regs,
				TargetValidators: map[Point]TargetValidator{Output: func(any) error {
					order = append(order, "configured")
					return tc.configured
				}},
			})
			out, _ := e.Emit(context.Background(), buildAt(t, nil, Output), WithTargetValidator(func(any) error {
				order = append(order, "local")
				return tc.local
			}))
			if got := strings.Join(order, ","); got != tc.wantOrder {
				t.Fatalf("validators ran %q, want %q", got, tc.wantOrder)
			}
			r := out.Record
			if r.Verdict.Reason != tc.wantReason || (tc.wantReason != "" && (r.DecidedBy != nil || out.Proceed)) {
				t.Fatalf("verdict %s %s decided_by %v", r.Verdict.Decision, r.Verdict.Reason, derefInt(r.DecidedBy))
			}
		})
	}
}
