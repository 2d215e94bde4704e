package enforcement

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

var gateReasons = map[string]bool{
	ReasonVerdictInvalid:           true,
	ReasonTransformInvalid:         true,
	ReasonTransformTargetForbidden: true,
}

var verdictSeeds = []string{
	`{"decision":"allow"}`,
	`{"decision":"deny","reason":"p:x","message":"m","approval":{}}`,
	`{"decision":"deny","approval":{"ticket":{"id":1}},"evidence":{"artefact":"sha256:00","verification_pointers":{"a":"u"}}}`,
	`{"decision":"transform","transform":{"path":"$target[0][\"k\"]","value":[1,2.50,-0,1e400]}}`,
	`{"decision":"transform","transform":{"path":"$policy_target.a"}}`,
	`{"decision":"transform"}`,
	`{"decision":"allow","warnings":[{"reason":"w","message":"é🙂\u2028"},{}],"result_labels":["a"]}`,
	`{"decision":"allow","warnings":[],"result_labels":[],"evidence":{"verification_pointers":{}}}`,
	`{"decision":"deny","reason":"host_error:x"}`,
	`{"decision":"allow","approval":null}`,
	`{"decision":"transform","transform":{"path":"$targetfoo","value":null}}`,
	`[]`, `null`, `"allow"`, `{"decision":1}`, `{`, `{"decision":"allow"} x`,
	`{"decision":"allow","message":"\ud800"}`,
}

// FuzzParseVerdict: arbitrary JSON never panics the parser or the gate,
// every failure is a gate error with a gate reason, and a verdict that
// validates marshals and re-parses to an equal verdict.
func FuzzParseVerdict(f *testing.F) {
	for _, s := range verdictSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := jsonvalue.Decode(data)
		if err != nil {
			if _, derr := DecodeVerdict(data); !errors.Is(derr, ErrVerdictInvalid) {
				t.Fatalf("DecodeVerdict on non-JSON: %v", derr)
			}
			return
		}
		v, err := ParseVerdict(tree)
		if err != nil {
			if !errors.Is(err, ErrVerdictInvalid) || !gateReasons[GateReason(err)] {
				t.Fatalf("ParseVerdict error %v (reason %s)", err, GateReason(err))
			}
			return
		}
		valid := false
		for _, p := range Points() {
			err := v.Validate(p)
			if err != nil && (!errors.Is(err, ErrVerdictInvalid) || !gateReasons[GateReason(err)]) {
				t.Fatalf("Validate(%s) error %v (reason %s)", p, err, GateReason(err))
			}
			valid = valid || err == nil
		}
		if !valid {
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("marshal valid verdict: %v", err)
		}
		back, err := DecodeVerdict(b)
		if err != nil {
			t.Fatalf("re-parse %s: %v", b, err)
		}
		if !verdictsEqual(v, back) {
			t.Fatalf("round trip changed the verdict:\n%+v\n%+v\n%s", v, back, b)
		}
		// The record projection of any valid verdict is valid JSON without
		// the transform value.
		rb, err := json.Marshal(&Record{InterceptionPoint: PreToolCall, Mode: Enforce, Verdict: v, Sequence: 0})
		if err != nil || !json.Valid(rb) {
			t.Fatalf("record projection: %v\n%s", err, rb)
		}
	})
}

// FuzzEmit: arbitrary JSON as the target of a well-formed context never
// panics an emission, in any profile or mode, and always yields exactly one
// schema-valid record for the context's sequence.
func FuzzEmit(f *testing.F) {
	for _, s := range append(verdictSeeds,
		`{}`, `{"url":"https://example.com","n":3}`, `9007199254740993`, `18446744073709551616`,
		`1e400`, `-0`, strings.Repeat("[", 100)+strings.Repeat("]", 100),
		`{"`+strings.Repeat("k", 300)+`":"`+strings.Repeat("v", 600)+`"}`,
	) {
		f.Add([]byte(s))
	}
	profiles := []Profile{SequentialFirstDeny, SequentialRunAll, ParallelStrictest, ParallelUnanimous}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := jsonvalue.Decode(data)
		if err != nil {
			return
		}
		for i, profile := range profiles {
			var records atomic.Int64
			var last *Record
			e, err := NewEmitter(Options{
				Interceptors: []Registration{
					// Tamper with the private copy.
					reg("", func(_ context.Context, c Context) (Verdict, error) {
						c["target"] = nil
						if tc, ok := c["tool_call"].(map[string]any); ok {
							tc["args"] = "x"
						}
						return Warn("f:w", "m"), nil
					}),
					// The input itself, read as a verdict.
					reg("", func(context.Context, Context) (Verdict, error) { return ParseVerdict(tree) }),
					verdictReg(TransformTo("$target", map[string]any{"redacted": true})),
				},
				Composition:     Composition{Profile: profile, OnDisagreement: KnobApproval, OnTransformConflict: KnobApproval, OnApproval: OnApprovalResume},
				Resolver:        echoResolver(OutcomeApprove, &Verdict{Decision: DecisionAllow}),
				MaxDepth:        64,
				MaxContextBytes: 1 << 16,
				Sink: RecordSinkFunc(func(_ context.Context, r *Record) error {
					records.Add(1)
					last = r
					return nil
				}),
			})
			if err != nil {
				t.Fatal(err)
			}
			c := buildAt(t, nil, PreToolCall)
			c["tool_call"].(map[string]any)["args"] = tree
			c["target"] = tree
			mode := Enforce
			if i%2 == 1 {
				mode = EvaluateOnly
			}
			out, err := e.EmitUnchecked(context.Background(), c, WithMode(mode))
			if err != nil {
				t.Fatalf("%s: %v", profile, err)
			}
			if records.Load() != 1 || last != out.Record || last.Sequence != c.Sequence() {
				t.Fatalf("%s: %d records", profile, records.Load())
			}
			wire, _ := recordWire(t, last)
			validateRecordSchema(t, wire)
		}
	})
}
