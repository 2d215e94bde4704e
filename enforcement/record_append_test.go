package enforcement

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestRecordAppendJSON: MarshalJSON writes what it wrote before it
// appended, encoding/json (without HTML escaping) agrees, AppendJSON
// appends the same whatever the buffer held, and it fills a buffer large
// enough without allocating.
func TestRecordAppendJSON(t *testing.T) {
	seq, dec, trunc := int64(1234567), 3, true
	recs := []Record{
		{InterceptionPoint: Input, Mode: Enforce, Verdict: Allow(), SessionID: "s", Composition: Composition{Profile: SequentialFirstDeny}},
		{
			InterceptionPoint: PostModelCall, Mode: Enforce, Sequence: seq, DecidedBy: &dec, FoldTruncated: &trunc,
			Verdict: Verdict{
				Decision: DecisionDeny, Reason: "policy:x", Message: strings.Repeat("é\"<", 120),
				Warnings:     []Warning{{Reason: "w:1", Message: "tab\t"}, {Message: "\u2028"}},
				Approval:     map[string]any{"k": "v"},
				Transform:    &Transform{Path: "$target", Value: "secret"},
				ResultLabels: []string{"a", "b\x00"},
			},
			InputIdentity: strp("sha256:ab"), IdentityProvider: "jcs", SessionID: "sess-\xff", Timestamp: strp("2026-01-02T03:04:05Z"),
			Trace:       &Trace{TraceID: "t", SpanID: "s"},
			Composition: Composition{Profile: ParallelStrictest, OnApproval: OnApprovalStop, OnDisagreement: "strictest"},
			Verdicts:    []VerdictSummary{{Index: 0, Decision: DecisionAllow}, {Index: 11, Decision: DecisionDeny, Reason: "r", Name: "n"}},
			ResolvedBy:  ResolvedByRejection, InterceptorsRegistered: 12, Extensions: map[string]any{"team": "a"},
		},
	}
	// What MarshalJSON wrote before it appended (bytes.Buffer based).
	golden := []string{
		"{\"interception_point\":\"input\",\"mode\":\"enforce\",\"verdict\":{\"decision\":\"allow\"},\"input_identity\":null,\"enforced_identity\":null,\"identity_provider\":null,\"session_id\":\"s\",\"sequence\":0,\"decided_by\":null,\"composition\":{\"profile\":\"sequential/first_deny\"},\"interceptors_registered\":0}",
		"{\"interception_point\":\"post_model_call\",\"mode\":\"enforce\",\"verdict\":{\"decision\":\"deny\",\"reason\":\"policy:x\",\"message\":\"é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<é\\\"<…\",\"warnings\":[{\"reason\":\"w:1\",\"message\":\"tab\\t\"},{\"message\":\"\\u2028\"}],\"approval\":{},\"transform\":{\"path\":\"$target\"},\"result_labels\":[\"a\",\"b\\u0000\"]},\"input_identity\":\"sha256:ab\",\"enforced_identity\":null,\"identity_provider\":\"jcs\",\"session_id\":\"sess-\\ufffd\",\"sequence\":1234567,\"timestamp\":\"2026-01-02T03:04:05Z\",\"trace\":{\"trace_id\":\"t\",\"span_id\":\"s\"},\"decided_by\":3,\"composition\":{\"profile\":\"parallel/strictest\",\"on_approval\":\"stop\",\"on_disagreement\":\"strictest\"},\"verdicts\":[{\"index\":0,\"decision\":\"allow\"},{\"index\":11,\"decision\":\"deny\",\"reason\":\"r\",\"name\":\"n\"}],\"fold_truncated\":true,\"resolved_by\":\"rejection\",\"interceptors_registered\":12,\"extensions\":{\"team\":\"a\"}}",
	}
	for i, r := range recs {
		want := []byte(golden[i])
		m, err := r.MarshalJSON()
		if err != nil || !bytes.Equal(m, want) {
			t.Fatalf("record %d: MarshalJSON\n%s (%v), want\n%s", i, m, err, want)
		}
		var viaJSON bytes.Buffer
		enc := json.NewEncoder(&viaJSON)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil || viaJSON.String() != string(want)+"\n" {
			t.Errorf("record %d: encoding/json writes %s (%v)", i, viaJSON.Bytes(), err)
		}
		got, err := r.AppendJSON([]byte("prefix"))
		if err != nil || string(got) != "prefix"+string(want) {
			t.Errorf("record %d: AppendJSON %s (%v), want prefix%s", i, got, err, want)
		}
	}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { _, _ = recs[0].AppendJSON(buf[:0]) }); n != 0 {
		t.Errorf("AppendJSON into a large enough buffer: %v allocations, want none", n)
	}
}
