package enforcement

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// evidenceOfSize returns a deny whose evidence is exactly n RFC 8785 bytes:
// {"artefact":"…"} is 15 bytes plus the string.
func evidenceOfSize(n int) string {
	return `{"decision":"deny","evidence":{"artefact":"` + strings.Repeat("a", n-15) + `"}}`
}

// TestVerdictGate runs every §5 rule (CTK.md §5.8) through ParseVerdict and
// Validate, then through an emitter: the slot's substituted deny carries the
// same reserved reason and the failing slot's index.
func TestVerdictGate(t *testing.T) {
	cases := []struct {
		name   string
		json   string
		point  Point
		reason string // "" when the verdict is valid
	}{
		{"allow", `{"decision":"allow"}`, Input, ""},
		{"deny-full", `{"decision":"deny","reason":"p:x","message":"m","warnings":[{"reason":"w"},{}],"approval":{"k":1},"evidence":{"artefact":"sha256:00","verification_pointers":{"a":"https://x"}},"result_labels":["l"]}`, Input, ""},
		{"nulls-as-absent", `{"decision":"allow","reason":null,"message":null,"warnings":null,"transform":null,"evidence":null,"result_labels":null}`, Input, ""},
		{"unknown-members-dropped", `{"decision":"allow","x-vendor":{"a":1},"confidence":0.9}`, Input, ""},
		{"transform-target", `{"decision":"transform","transform":{"path":"$target.url","value":"x"}}`, PreToolCall, ""},
		{"transform-alias", `{"decision":"transform","transform":{"path":"$policy_target[\"url\"]","value":null}}`, PreToolCall, ""},
		{"transform-value-absent", `{"decision":"transform","transform":{"path":"$target.content"}}`, Output, ""},

		{"not-object-array", `[{"decision":"allow"}]`, Input, ReasonVerdictInvalid},
		{"not-object-string", `"allow"`, Input, ReasonVerdictInvalid},
		{"not-object-null", `null`, Input, ReasonVerdictInvalid},
		{"decision-missing", `{"reason":"p:x"}`, Input, ReasonVerdictInvalid},
		{"decision-not-string", `{"decision":1}`, Input, ReasonVerdictInvalid},
		{"decision-warn", `{"decision":"warn"}`, Input, ReasonVerdictInvalid},
		{"decision-case", `{"decision":"Allow"}`, Input, ReasonVerdictInvalid},
		{"reason-host-error", `{"decision":"deny","reason":"host_error:context_invalid"}`, Input, ReasonVerdictInvalid},
		{"reason-not-string", `{"decision":"deny","reason":7}`, Input, ReasonVerdictInvalid},
		{"message-not-string", `{"decision":"deny","message":["x"]}`, Input, ReasonVerdictInvalid},
		{"warning-host-error", `{"decision":"allow","warnings":[{"reason":"host_error:interceptor_failed"}]}`, Input, ReasonVerdictInvalid},
		{"warnings-not-array", `{"decision":"allow","warnings":{"reason":"w"}}`, Input, ReasonVerdictInvalid},
		{"warning-not-object", `{"decision":"allow","warnings":["w"]}`, Input, ReasonVerdictInvalid},
		{"warning-message-not-string", `{"decision":"allow","warnings":[{"message":1}]}`, Input, ReasonVerdictInvalid},
		{"approval-on-allow", `{"decision":"allow","approval":{}}`, Input, ReasonVerdictInvalid},
		{"approval-on-transform", `{"decision":"transform","approval":{},"transform":{"path":"$target","value":1}}`, Output, ReasonVerdictInvalid},
		{"approval-not-object", `{"decision":"deny","approval":true}`, Input, ReasonVerdictInvalid},
		{"approval-null", `{"decision":"deny","approval":null}`, Input, ReasonVerdictInvalid},
		{"transform-without-body", `{"decision":"transform"}`, PreToolCall, ReasonVerdictInvalid},
		{"body-on-allow", `{"decision":"allow","transform":{"path":"$target","value":1}}`, PreToolCall, ReasonVerdictInvalid},
		{"body-on-deny", `{"decision":"deny","transform":{"path":"$target","value":1}}`, PreToolCall, ReasonVerdictInvalid},
		{"transform-not-object", `{"decision":"transform","transform":"$target"}`, PreToolCall, ReasonVerdictInvalid},
		{"transform-path-missing", `{"decision":"transform","transform":{"value":1}}`, PreToolCall, ReasonVerdictInvalid},
		{"bad-root", `{"decision":"transform","transform":{"path":"$context.session.id","value":1}}`, PreToolCall, ReasonTransformTargetForbidden},
		{"bad-root-bare", `{"decision":"transform","transform":{"path":"target.url","value":1}}`, PreToolCall, ReasonTransformTargetForbidden},
		{"near-miss-targetfoo", `{"decision":"transform","transform":{"path":"$targetfoo","value":1}}`, PreToolCall, ReasonTransformInvalid},
		{"near-miss-targets", `{"decision":"transform","transform":{"path":"$targets.x","value":1}}`, PreToolCall, ReasonTransformInvalid},
		{"grammar-empty-member", `{"decision":"transform","transform":{"path":"$target..x","value":1}}`, PreToolCall, ReasonTransformInvalid},
		{"grammar-negative-index", `{"decision":"transform","transform":{"path":"$target[-1]","value":1}}`, PreToolCall, ReasonTransformInvalid},
		{"transform-at-startup", `{"decision":"transform","transform":{"path":"$target","value":{}}}`, AgentStartup, ReasonTransformTargetForbidden},
		{"transform-at-shutdown", `{"decision":"transform","transform":{"path":"$target.reason","value":"x"}}`, AgentShutdown, ReasonTransformTargetForbidden},
		{"evidence-not-object", `{"decision":"deny","evidence":"sha256:00"}`, Input, ReasonVerdictInvalid},
		{"evidence-artefact-not-string", `{"decision":"deny","evidence":{"artefact":1}}`, Input, ReasonVerdictInvalid},
		{"evidence-pointer-not-string", `{"decision":"deny","evidence":{"verification_pointers":{"a":1}}}`, Input, ReasonVerdictInvalid},
		{"evidence-at-cap", evidenceOfSize(MaxEvidenceBytes), Input, ""},
		{"evidence-over-cap", evidenceOfSize(MaxEvidenceBytes + 1), Input, ReasonVerdictInvalid},
		{"evidence-10300", `{"decision":"deny","evidence":{"artefact":"` + strings.Repeat("x", 10300) + `"}}`, Input, ReasonVerdictInvalid},
		// 5113 quotes are 5113 raw bytes but 10226 canonical ones.
		{"evidence-canonical-escapes", `{"decision":"deny","evidence":{"artefact":"` + strings.Repeat(`\"`, 5113) + `"}}`, Input, ReasonVerdictInvalid},
		// 2-byte runes count as 2 bytes: 5113 × "é" is 10226 bytes.
		{"evidence-utf8-bytes", `{"decision":"deny","evidence":{"artefact":"` + strings.Repeat("é", 5113) + `"}}`, Input, ReasonVerdictInvalid},
		// §5.3: evidence travels unchanged, unknown members included, so
		// they count toward the cap that keeps records bounded.
		{"evidence-unknown-members-kept", `{"decision":"deny","evidence":{"artefact":"a","blob":"` + strings.Repeat("x", 10000) + `"}}`, Input, ""},
		{"evidence-unknown-members-counted", `{"decision":"deny","evidence":{"artefact":"a","blob":"` + strings.Repeat("x", 11000) + `"}}`, Input, ReasonVerdictInvalid},
		{"labels-not-strings", `{"decision":"allow","result_labels":["a",1]}`, Input, ReasonVerdictInvalid},
		{"labels-not-array", `{"decision":"allow","result_labels":"a"}`, Input, ReasonVerdictInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := jsonvalue.Decode([]byte(tc.json))
			if err != nil {
				t.Fatalf("test JSON: %v", err)
			}
			v, perr := ParseVerdict(tree)
			err = perr
			if err == nil {
				err = v.Validate(tc.point)
			}
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("valid verdict rejected: %v", err)
				}
			} else {
				if err == nil {
					t.Fatalf("invalid verdict accepted: %+v", v)
				}
				if !errors.Is(err, ErrVerdictInvalid) || GateReason(err) != tc.reason {
					t.Fatalf("GateReason = %s (%v), want %s", GateReason(err), err, tc.reason)
				}
			}

			// The same answer through an emitter, as a returned verdict or
			// as a decoding error.
			e := newTestEmitter(t, Options{
				Interceptors: []Registration{allowReg(), reg("", func(context.Context, Context) (Verdict, error) {
					return v, perr
				})},
				Composition: Composition{Profile: SequentialRunAll},
			})
			out, _ := e.EmitUnchecked(context.Background(), buildAt(t, nil, tc.point))
			r := out.Record
			if tc.reason == "" {
				if IsHostError(r.Verdict.Reason) {
					t.Fatalf("valid verdict substituted: %s %s", r.Verdict.Reason, r.Verdict.Message)
				}
				return
			}
			if r.Verdict.Decision != DecisionDeny || r.Verdict.Reason != tc.reason || derefInt(r.DecidedBy) != 1 {
				t.Fatalf("record verdict %s %s decided_by %v, want deny %s by slot 1", r.Verdict.Decision, r.Verdict.Reason, derefInt(r.DecidedBy), tc.reason)
			}
		})
	}
}

// TestUnknownMembersDropped: unknown verdict members vanish on parse and so
// never reach a marshalled verdict or record.
func TestUnknownMembersDropped(t *testing.T) {
	v, err := DecodeVerdict([]byte(`{"decision":"allow","x-vendor":"SECRET","warnings":[{"reason":"w","extra":"SECRET"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"decision":"allow","warnings":[{"reason":"w"}]}` {
		t.Fatalf("marshalled %s", b)
	}
}

// TestVerdictJSONRoundTrip: valid verdicts survive MarshalJSON then
// UnmarshalJSON, an empty approval block included (it is what makes a deny
// liftable).
func TestVerdictJSONRoundTrip(t *testing.T) {
	for _, v := range []Verdict{
		Allow(),
		Deny("p:no", "nope"),
		Escalate("p:ask", "ask"),
		Warn("p:w", "careful"),
		TransformTo("$target[0][\"a-b\"]", map[string]any{"n": json.Number("1.50"), "s": "<&>"}),
		TransformTo("$target", nil),
		{Decision: DecisionDeny, Approval: map[string]any{"ticket": "T-1"}, Evidence: &Evidence{Artefact: strp("sha256:0")}, ResultLabels: []string{"a", "b"}},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back Verdict
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !verdictsEqual(v, back) {
			t.Errorf("round trip of %s gave %+v", b, back)
		}
	}
	var v Verdict
	if err := json.Unmarshal([]byte(`{"decision":"allow","result_labels":[1]}`), &v); !errors.Is(err, ErrVerdictInvalid) {
		t.Fatalf("UnmarshalJSON error = %v, want ErrVerdictInvalid", err)
	}
	if _, err := DecodeVerdict([]byte(`{"decision":`)); !errors.Is(err, ErrVerdictInvalid) {
		t.Fatalf("DecodeVerdict error = %v, want ErrVerdictInvalid", err)
	}
}

// verdictsEqual compares verdicts modulo representation: nil and empty
// slices and maps, and JSON-equal transform values.
func verdictsEqual(a, b Verdict) bool {
	norm := func(v Verdict) Verdict {
		if len(v.Warnings) == 0 {
			v.Warnings = nil
		}
		if len(v.ResultLabels) == 0 {
			v.ResultLabels = nil
		}
		if v.Evidence != nil && len(v.Evidence.VerificationPointers) == 0 {
			e := *v.Evidence
			e.VerificationPointers = nil
			v.Evidence = &e
		}
		return v
	}
	a, b = norm(a), norm(b)
	if (a.Transform == nil) != (b.Transform == nil) {
		return false
	}
	if a.Transform != nil {
		if a.Transform.Path != b.Transform.Path || !jsonEqual(a.Transform.Value, b.Transform.Value) {
			return false
		}
		a.Transform, b.Transform = nil, nil
	}
	if (a.Approval == nil) != (b.Approval == nil) || (a.Approval != nil && !jsonEqual(a.Approval, b.Approval)) {
		return false
	}
	a.Approval, b.Approval = nil, nil
	return reflect.DeepEqual(a, b)
}

// TestResolutionValidationOrder drives §9's normative order through an
// emitter: echo rule, then outcome/verdict shape, then the §5 gate, then
// outcome/verdict consistency.
func TestResolutionValidationOrder(t *testing.T) {
	wrongID := strp("sha256:" + strings.Repeat("0", 64))
	allow := &Verdict{Decision: DecisionAllow}
	deny := &Verdict{Decision: DecisionDeny, Reason: "p:rejected"}
	bogus := &Verdict{Decision: "maybe"}
	cases := []struct {
		name       string
		resolve    func(req ApprovalRequest) ApprovalResolution
		reason     string // combined verdict reason
		decision   Decision
		resolvedBy string
		decidedBy  any
	}{
		{"mismatch-before-invalid-verdict", func(ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeApprove, ContextIdentity: wrongID, Verdict: bogus}
		}, ReasonApprovalIdentityMismatch, DecisionDeny, ResolvedByRejection, nil},
		{"mismatch-before-bad-outcome", func(ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: "maybe", ContextIdentity: wrongID}
		}, ReasonApprovalIdentityMismatch, DecisionDeny, ResolvedByRejection, nil},
		{"mismatch-null-echo", func(ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeApprove, Verdict: allow}
		}, ReasonApprovalIdentityMismatch, DecisionDeny, ResolvedByRejection, nil},
		{"approve-without-verdict", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeApprove, ContextIdentity: r.ContextIdentity}
		}, ReasonApprovalResolverFailed, DecisionDeny, ResolvedByRejection, nil},
		{"reject-without-verdict", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeReject, ContextIdentity: r.ContextIdentity}
		}, ReasonApprovalResolverFailed, DecisionDeny, ResolvedByRejection, nil},
		{"unknown-outcome", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: "maybe", ContextIdentity: r.ContextIdentity, Verdict: allow}
		}, ReasonApprovalResolverFailed, DecisionDeny, ResolvedByRejection, nil},
		{"unresolved-with-verdict", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeUnresolved, ContextIdentity: r.ContextIdentity, Verdict: allow}
		}, ReasonApprovalResolverFailed, DecisionDeny, ResolvedByRejection, nil},
		{"unresolved", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeUnresolved, ContextIdentity: r.ContextIdentity}
		}, ReasonApprovalUnresolved, DecisionDeny, ResolvedByRejection, nil},
		{"approve-invalid-verdict", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeApprove, ContextIdentity: r.ContextIdentity, Verdict: bogus}
		}, ReasonVerdictInvalid, DecisionDeny, ResolvedByRejection, nil},
		{"approve-host-error-reason", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeApprove, ContextIdentity: r.ContextIdentity, Verdict: &Verdict{Decision: DecisionAllow, Reason: ReasonNoInterceptor}}
		}, ReasonVerdictInvalid, DecisionDeny, ResolvedByRejection, nil},
		{"approve-carrying-deny", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeApprove, ContextIdentity: r.ContextIdentity, Verdict: deny}
		}, ReasonVerdictInvalid, DecisionDeny, ResolvedByRejection, nil},
		{"reject-carrying-allow", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeReject, ContextIdentity: r.ContextIdentity, Verdict: allow}
		}, ReasonVerdictInvalid, DecisionDeny, ResolvedByRejection, nil},
		{"reject", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeReject, ContextIdentity: r.ContextIdentity, Verdict: deny}
		}, "p:rejected", DecisionDeny, ResolvedByRejection, 0},
		{"approve", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeApprove, ContextIdentity: r.ContextIdentity, Verdict: allow}
		}, "", DecisionAllow, ResolvedByApproval, 0},
		{"approve-transform-fails-to-apply", func(r ApprovalRequest) ApprovalResolution {
			return ApprovalResolution{Outcome: OutcomeApprove, ContextIdentity: r.ContextIdentity, Verdict: &Verdict{Decision: DecisionTransform, Transform: &Transform{Path: "$target.missing.deep", Value: 1}}}
		}, ReasonTransformInvalid, DecisionDeny, ResolvedByApproval, nil},
		// A decoded resolution whose verdict fails its type checks still
		// reports the echo rule first, and verdict_invalid after it.
		{"decoded-malformed-verdict-mismatch", func(ApprovalRequest) ApprovalResolution {
			return parseResolution(`{"outcome":"approve","context_identity":"sha256:x","verdict":{"decision":"allow","warnings":"w"}}`)
		}, ReasonApprovalIdentityMismatch, DecisionDeny, ResolvedByRejection, nil},
		{"decoded-malformed-verdict", func(r ApprovalRequest) ApprovalResolution {
			return parseResolution(`{"outcome":"approve","context_identity":"` + *r.ContextIdentity + `","verdict":{"decision":"allow","warnings":"w"}}`)
		}, ReasonVerdictInvalid, DecisionDeny, ResolvedByRejection, nil},
		{"decoded-approve", func(r ApprovalRequest) ApprovalResolution {
			return parseResolution(`{"outcome":"approve","context_identity":"` + *r.ContextIdentity + `","verdict":{"decision":"allow"}}`)
		}, "", DecisionAllow, ResolvedByApproval, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var req ApprovalRequest
			e := newTestEmitter(t, Options{
				Interceptors: []Registration{verdictReg(Escalate("p:ask", "needs approval")), allowReg()},
				Resolver: ApprovalResolverFunc(func(_ context.Context, r ApprovalRequest) (ApprovalResolution, error) {
					req = r
					return tc.resolve(r), nil
				}),
			})
			c := buildAt(t, nil, PreToolCall)
			out, _ := e.Emit(context.Background(), c)
			r := out.Record
			if r.Verdict.Decision != tc.decision || r.Verdict.Reason != tc.reason || r.ResolvedBy != tc.resolvedBy || derefInt(r.DecidedBy) != tc.decidedBy {
				t.Fatalf("record %s %q resolved_by %q decided_by %v; want %s %q %q %v",
					r.Verdict.Decision, r.Verdict.Reason, r.ResolvedBy, derefInt(r.DecidedBy), tc.decision, tc.reason, tc.resolvedBy, tc.decidedBy)
			}
			if out.Proceed != (tc.decision == DecisionAllow) {
				t.Fatalf("proceed = %v", out.Proceed)
			}
			// The request binds what the resolver saw (§9).
			if req.ContextIdentity == nil || *req.ContextIdentity != mustIdentity(t, c) || req.InterceptionPoint != PreToolCall || req.Verdict.Reason != "p:ask" {
				t.Fatalf("request %+v", req)
			}
		})
	}
}

func parseResolution(s string) ApprovalResolution {
	tree, err := jsonvalue.Decode([]byte(s))
	if err != nil {
		panic(err)
	}
	res, err := ParseApprovalResolution(tree)
	if err != nil {
		panic(err)
	}
	return res
}

// TestApprovalRequestRedaction: the request identity is computed over the
// redacted copy; the record identities and the enforced action are not
// affected (§9 redaction seam).
func TestApprovalRequestRedaction(t *testing.T) {
	red, err := PathRedactor([]string{"$target.url"}, "[redacted]")
	if err != nil {
		t.Fatal(err)
	}
	var req ApprovalRequest
	e := newTestEmitter(t, Options{
		Interceptors: []Registration{verdictReg(Escalate("p:ask", ""))},
		Redactor:     red,
		Resolver: ApprovalResolverFunc(func(_ context.Context, r ApprovalRequest) (ApprovalResolution, error) {
			req = r
			return ApprovalResolution{Outcome: OutcomeApprove, ContextIdentity: r.ContextIdentity, Verdict: &Verdict{Decision: DecisionAllow}}, nil
		}),
	})
	c := buildAt(t, nil, PreToolCall)
	out, err := e.Emit(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if req.Context.Target().(map[string]any)["url"] != "[redacted]" ||
		req.Context["tool_call"].(map[string]any)["args"].(map[string]any)["url"] != "[redacted]" {
		t.Fatal("redaction not applied with write-back")
	}
	if *req.ContextIdentity != mustIdentity(t, req.Context) || *req.ContextIdentity == *out.Record.InputIdentity {
		t.Fatal("request identity not computed over the redacted context")
	}
	if out.Target().(map[string]any)["url"] != "https://example.com" || *out.Record.InputIdentity != mustIdentity(t, c) {
		t.Fatal("redaction reached the enforced context or the record")
	}
	if _, err := PathRedactor([]string{"$context.x"}, nil); err == nil {
		t.Fatal("PathRedactor accepted a forbidden path")
	}
}
