package enforcement

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Record is the payload-free InterceptionRecord of one emission (§10.3).
// Its JSON form follows interception-record.schema.json exactly: identities,
// identity_provider and decided_by are explicit nulls when unset; timestamp,
// trace, fold_truncated and resolved_by are omitted when unset, and so is an
// empty verdicts list except in the profiles whose records require it.
type Record struct {
	InterceptionPoint Point
	Mode              Mode
	// Verdict is the combined verdict; it is projected when marshalled, so a
	// record never carries transform values or approval members.
	Verdict          Verdict
	InputIdentity    *string
	EnforcedIdentity *string
	// IdentityProvider is the declared provider name; "" marshals as null.
	IdentityProvider string
	SessionID        string
	Sequence         int64
	Timestamp        *string
	Trace            *Trace
	DecidedBy        *int
	Composition      Composition
	Verdicts         []VerdictSummary
	FoldTruncated    *bool
	// ResolvedBy is "approval", "rejection" or "" when the seam was not consulted.
	ResolvedBy             string
	InterceptorsRegistered int
	// Extensions is host data outside the spec's record (Options.
	// RecordExtensions), marshalled as "extensions" when not empty. Records
	// of one emitter share the map: treat it as read-only.
	Extensions map[string]any
	// extensionsJSON is Extensions already marshalled, when the emitter
	// made the record: every record of an emitter carries the same
	// extensions, so they are marshalled once, not once per record.
	extensionsJSON []byte
}

// Trace carries W3C Trace Context identifiers echoed from the context.
type Trace struct {
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
}

// VerdictSummary is one invoked interceptor's post-gate verdict on a record.
type VerdictSummary struct {
	Index    int      `json:"index"`
	Decision Decision `json:"decision"`
	Reason   string   `json:"reason,omitempty"`
	Name     string   `json:"name,omitempty"`
}

// Resolved-by values.
const (
	ResolvedByApproval  = "approval"
	ResolvedByRejection = "rejection"
)

// MarshalJSON writes the §10.3 wire shape.
func (r Record) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(768) // a typical record is 600-700 bytes: one allocation
	buf.WriteString(`{"interception_point":`)
	writeString(&buf, string(r.InterceptionPoint))
	buf.WriteString(`,"mode":`)
	writeString(&buf, string(r.Mode))
	buf.WriteString(`,"verdict":`)
	vb, err := r.Verdict.appendJSON(nil, true)
	if err != nil {
		return nil, err
	}
	buf.Write(vb)
	buf.WriteString(`,"input_identity":`)
	writeNullableString(&buf, r.InputIdentity)
	buf.WriteString(`,"enforced_identity":`)
	writeNullableString(&buf, r.EnforcedIdentity)
	buf.WriteString(`,"identity_provider":`)
	if r.IdentityProvider == "" {
		buf.WriteString("null")
	} else {
		writeString(&buf, r.IdentityProvider)
	}
	buf.WriteString(`,"session_id":`)
	writeString(&buf, r.SessionID)
	buf.WriteString(`,"sequence":`)
	buf.WriteString(strconv.FormatInt(r.Sequence, 10))
	if r.Timestamp != nil {
		buf.WriteString(`,"timestamp":`)
		writeString(&buf, *r.Timestamp)
	}
	if r.Trace != nil {
		tb, _ := json.Marshal(r.Trace)
		buf.WriteString(`,"trace":`)
		buf.Write(tb)
	}
	buf.WriteString(`,"decided_by":`)
	if r.DecidedBy == nil {
		buf.WriteString("null")
	} else {
		buf.WriteString(strconv.Itoa(*r.DecidedBy))
	}
	buf.WriteString(`,"composition":{"profile":`)
	writeString(&buf, string(r.Composition.Profile))
	for _, knob := range [...]struct{ key, val string }{
		{"on_approval", r.Composition.OnApproval},
		{"on_disagreement", r.Composition.OnDisagreement},
		{"on_transform_conflict", r.Composition.OnTransformConflict},
	} {
		if knob.val != "" {
			buf.WriteString(`,"` + knob.key + `":`)
			writeString(&buf, knob.val)
		}
	}
	buf.WriteByte('}')
	// The schema requires verdicts in the multi-verdict profiles even when
	// no interceptor ran (a pre-dispatch rejection, a host failure): [] then.
	if len(r.Verdicts) > 0 || (r.Composition.Profile != SequentialFirstDeny && r.Composition.Profile != "") {
		buf.WriteString(`,"verdicts":[`)
		for i, s := range r.Verdicts {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(`{"index":`)
			buf.WriteString(strconv.Itoa(s.Index))
			buf.WriteString(`,"decision":`)
			writeString(&buf, string(s.Decision))
			if s.Reason != "" {
				buf.WriteString(`,"reason":`)
				writeString(&buf, s.Reason)
			}
			if s.Name != "" {
				buf.WriteString(`,"name":`)
				writeString(&buf, s.Name)
			}
			buf.WriteByte('}')
		}
		buf.WriteByte(']')
	}
	if r.FoldTruncated != nil {
		buf.WriteString(`,"fold_truncated":`)
		buf.WriteString(strconv.FormatBool(*r.FoldTruncated))
	}
	if r.ResolvedBy != "" {
		buf.WriteString(`,"resolved_by":`)
		writeString(&buf, r.ResolvedBy)
	}
	buf.WriteString(`,"interceptors_registered":`)
	buf.WriteString(strconv.Itoa(r.InterceptorsRegistered))
	if len(r.Extensions) > 0 {
		eb := r.extensionsJSON
		if eb == nil {
			var err error
			if eb, err = json.Marshal(r.Extensions); err != nil {
				return nil, fmt.Errorf("interception record extensions: %w", err)
			}
		}
		buf.WriteString(`,"extensions":`)
		buf.Write(eb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeNullableString(buf *bytes.Buffer, s *string) {
	if s == nil {
		buf.WriteString("null")
		return
	}
	writeString(buf, *s)
}

// UnmarshalJSON decodes the §10.3 wire shape (as MarshalJSON writes it).
// The verdict is its payload-free projection: a transform decodes without
// a value.
func (r *Record) UnmarshalJSON(data []byte) error {
	var w struct {
		InterceptionPoint      Point             `json:"interception_point"`
		Mode                   Mode              `json:"mode"`
		Verdict                json.RawMessage   `json:"verdict"`
		InputIdentity          *string           `json:"input_identity"`
		EnforcedIdentity       *string           `json:"enforced_identity"`
		IdentityProvider       *string           `json:"identity_provider"`
		SessionID              string            `json:"session_id"`
		Sequence               int64             `json:"sequence"`
		Timestamp              *string           `json:"timestamp"`
		Trace                  *Trace            `json:"trace"`
		DecidedBy              *int              `json:"decided_by"`
		Composition            map[string]string `json:"composition"`
		Verdicts               []VerdictSummary  `json:"verdicts"`
		FoldTruncated          *bool             `json:"fold_truncated"`
		ResolvedBy             *string           `json:"resolved_by"`
		InterceptorsRegistered int               `json:"interceptors_registered"`
		Extensions             map[string]any    `json:"extensions"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("interception record: %w", err)
	}
	if len(w.Verdict) == 0 {
		return fmt.Errorf("interception record: missing verdict")
	}
	v, err := DecodeVerdict(w.Verdict)
	if err != nil {
		return fmt.Errorf("interception record verdict: %w", err)
	}
	*r = Record{
		InterceptionPoint: w.InterceptionPoint, Mode: w.Mode, Verdict: v,
		InputIdentity: w.InputIdentity, EnforcedIdentity: w.EnforcedIdentity,
		SessionID: w.SessionID, Sequence: w.Sequence, Timestamp: w.Timestamp, Trace: w.Trace,
		DecidedBy: w.DecidedBy, Verdicts: w.Verdicts, FoldTruncated: w.FoldTruncated,
		InterceptorsRegistered: w.InterceptorsRegistered,
		Extensions:             w.Extensions,
		Composition: Composition{
			Profile:             Profile(w.Composition["profile"]),
			OnApproval:          w.Composition["on_approval"],
			OnDisagreement:      w.Composition["on_disagreement"],
			OnTransformConflict: w.Composition["on_transform_conflict"],
		},
	}
	if w.IdentityProvider != nil {
		r.IdentityProvider = *w.IdentityProvider
	}
	if w.ResolvedBy != nil {
		r.ResolvedBy = *w.ResolvedBy
	}
	return nil
}

// cloneExtensions deep-copies record extensions through their JSON form,
// which it also returns: the form every record of the emitter writes.
func cloneExtensions(ext map[string]any) (map[string]any, []byte, error) {
	b, err := json.Marshal(ext)
	if err != nil {
		return nil, nil, fmt.Errorf("record extensions: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, nil, fmt.Errorf("record extensions: %w", err)
	}
	return out, b, nil
}
