package enforcement

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestStrictVerdicts: an answer read from the wire (DecodeAnswer, then
// ParseVerdictStrict) refuses a member named twice anywhere and a member
// the closed verdict schema does not define, as verdict_invalid through an
// emitter, with a message that quotes nothing of the answer. Evidence keeps
// its unknown members (§5.3) and they reach the record unchanged.
func TestStrictVerdicts(t *testing.T) {
	const leak = "LEAKED"
	cases := []struct {
		name, answer string
		want         string // the combined reason; "" = the verdict stands
		notJSON      bool
	}{
		{"plain", `{"decision":"deny","reason":"policy:x","warnings":[{"reason":"w","message":"m"}]}`, "policy:x", false},
		{"duplicate top", `{"decision":"deny","decision":"allow"}`, ReasonVerdictInvalid, false},
		{"duplicate in warnings", `{"decision":"allow","warnings":[{"reason":"a","reason":"b"}]}`, ReasonVerdictInvalid, false},
		{"duplicate deep in transform value", `{"decision":"transform","transform":{"path":"$target.q","value":{"a":{"` + leak + `":1,"` + leak + `":2}}}}`, ReasonVerdictInvalid, false},
		{"duplicate in evidence", `{"decision":"allow","evidence":{"artefact":"a","artefact":"b"}}`, ReasonVerdictInvalid, false},
		{"unknown top", `{"decision":"allow","` + leak + `":1}`, ReasonVerdictInvalid, false},
		{"unknown in warnings", `{"decision":"allow","warnings":[{"` + leak + `":1}]}`, ReasonVerdictInvalid, false},
		{"unknown in transform", `{"decision":"transform","transform":{"path":"$target.q","value":1,"` + leak + `":1}}`, ReasonVerdictInvalid, false},
		{"unknown decision", `{"decision":"` + leak + `"}`, ReasonVerdictInvalid, false},
		{"non-string pointer", `{"decision":"allow","evidence":{"verification_pointers":{"` + leak + `":1}}}`, ReasonVerdictInvalid, false},
		{"approval stays open", `{"decision":"deny","reason":"policy:y","approval":{"ticket":"T-1"}}`, "policy:y", false},
		{"not JSON", `{"decision":`, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := DecodeAnswer([]byte(tc.answer))
			if tc.notJSON {
				if !errors.Is(err, ErrAnswerNotJSON) || errors.Is(err, ErrVerdictInvalid) {
					t.Fatalf("DecodeAnswer error = %v, want ErrAnswerNotJSON only", err)
				}
				return
			}
			var v Verdict
			if err == nil {
				v, err = ParseVerdictStrict(tree)
			}
			e := newTestEmitter(t, Options{Interceptors: []Registration{reg("remote", func(context.Context, Context) (Verdict, error) {
				return v, err
			})}})
			out, _ := e.EmitUnchecked(context.Background(), buildAt(t, nil, PreToolCall))
			if out.Verdict.Reason != tc.want {
				t.Fatalf("combined verdict %s %s %q, want %s", out.Verdict.Decision, out.Verdict.Reason, out.Verdict.Message, tc.want)
			}
			if strings.Contains(out.Verdict.Message, leak) {
				t.Errorf("message quotes the answer: %q", out.Verdict.Message)
			}
		})
	}
}

// TestEvidenceUnknownMembersTravel: §5.3 has the host propagate evidence
// unchanged, so members beyond artefact and verification_pointers survive
// the parse, the engine's private copy and the record, byte for byte.
func TestEvidenceUnknownMembersTravel(t *testing.T) {
	tree, err := DecodeAnswer([]byte(`{"decision":"deny","reason":"policy:x","evidence":{"artefact":"sha256:00","scheme":{"v":2,"n":[1.50,true,null]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ParseVerdictStrict(tree)
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEmitter(t, Options{Interceptors: []Registration{reg("remote", func(context.Context, Context) (Verdict, error) {
		return v, nil
	})}})
	out, _ := e.EmitUnchecked(context.Background(), buildAt(t, nil, PreToolCall))
	b, err := out.Record.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	const want = `"evidence":{"artefact":"sha256:00","scheme":{"n":[1.50,true,null],"v":2}}`
	if !strings.Contains(string(b), want) {
		t.Fatalf("record %s\nlacks %s", b, want)
	}
}

// TestEvidenceNullMembersTravel: "artefact": null and
// "verification_pointers": null are schema-valid evidence members; the
// record carries them as received rather than dropping them.
func TestEvidenceNullMembersTravel(t *testing.T) {
	tree, err := DecodeAnswer([]byte(`{"decision":"allow","evidence":{"artefact":null,"verification_pointers":null,"note":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ParseVerdictStrict(tree)
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	const want = `"evidence":{"artefact":null,"note":"x","verification_pointers":null}`
	if !strings.Contains(string(b), want) {
		t.Fatalf("verdict %s\nlacks %s", b, want)
	}
}
