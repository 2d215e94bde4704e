package enforcement

import (
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
	// A typical record is 600-700 bytes: one allocation.
	return r.AppendJSON(make([]byte, 0, 768))
}

// AppendJSON appends the §10.3 wire shape (what MarshalJSON returns) to
// dst, so a sink can frame a record in a buffer of its own.
func (r *Record) AppendJSON(dst []byte) ([]byte, error) {
	buf := append(dst, `{"interception_point":`...)
	buf = appendString(buf, string(r.InterceptionPoint))
	buf = append(buf, `,"mode":`...)
	buf = appendString(buf, string(r.Mode))
	buf = append(buf, `,"verdict":`...)
	buf, err := r.Verdict.appendJSON(buf, true)
	if err != nil {
		return nil, err
	}
	buf = append(buf, `,"input_identity":`...)
	buf = appendNullableString(buf, r.InputIdentity)
	buf = append(buf, `,"enforced_identity":`...)
	buf = appendNullableString(buf, r.EnforcedIdentity)
	buf = append(buf, `,"identity_provider":`...)
	if r.IdentityProvider == "" {
		buf = append(buf, "null"...)
	} else {
		buf = appendString(buf, r.IdentityProvider)
	}
	buf = append(buf, `,"session_id":`...)
	buf = appendString(buf, r.SessionID)
	buf = append(buf, `,"sequence":`...)
	buf = strconv.AppendInt(buf, r.Sequence, 10)
	if r.Timestamp != nil {
		buf = append(buf, `,"timestamp":`...)
		buf = appendString(buf, *r.Timestamp)
	}
	if r.Trace != nil {
		tb, _ := json.Marshal(r.Trace)
		buf = append(buf, `,"trace":`...)
		buf = append(buf, tb...)
	}
	buf = append(buf, `,"decided_by":`...)
	if r.DecidedBy == nil {
		buf = append(buf, "null"...)
	} else {
		buf = strconv.AppendInt(buf, int64(*r.DecidedBy), 10)
	}
	buf = append(buf, `,"composition":{"profile":`...)
	buf = appendString(buf, string(r.Composition.Profile))
	for _, knob := range [...]struct{ key, val string }{
		{"on_approval", r.Composition.OnApproval},
		{"on_disagreement", r.Composition.OnDisagreement},
		{"on_transform_conflict", r.Composition.OnTransformConflict},
	} {
		if knob.val != "" {
			buf = append(buf, `,"`...)
			buf = append(buf, knob.key...)
			buf = append(buf, `":`...)
			buf = appendString(buf, knob.val)
		}
	}
	buf = append(buf, '}')
	// The schema requires verdicts in the multi-verdict profiles even when
	// no interceptor ran (a pre-dispatch rejection, a host failure): [] then.
	if len(r.Verdicts) > 0 || (r.Composition.Profile != SequentialFirstDeny && r.Composition.Profile != "") {
		buf = append(buf, `,"verdicts":[`...)
		for i, s := range r.Verdicts {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"index":`...)
			buf = strconv.AppendInt(buf, int64(s.Index), 10)
			buf = append(buf, `,"decision":`...)
			buf = appendString(buf, string(s.Decision))
			if s.Reason != "" {
				buf = append(buf, `,"reason":`...)
				buf = appendString(buf, s.Reason)
			}
			if s.Name != "" {
				buf = append(buf, `,"name":`...)
				buf = appendString(buf, s.Name)
			}
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	if r.FoldTruncated != nil {
		buf = append(buf, `,"fold_truncated":`...)
		buf = strconv.AppendBool(buf, *r.FoldTruncated)
	}
	if r.ResolvedBy != "" {
		buf = append(buf, `,"resolved_by":`...)
		buf = appendString(buf, r.ResolvedBy)
	}
	buf = append(buf, `,"interceptors_registered":`...)
	buf = strconv.AppendInt(buf, int64(r.InterceptorsRegistered), 10)
	if len(r.Extensions) > 0 {
		eb := r.extensionsJSON
		if eb == nil {
			var err error
			if eb, err = json.Marshal(r.Extensions); err != nil {
				return nil, fmt.Errorf("interception record extensions: %w", err)
			}
		}
		buf = append(buf, `,"extensions":`...)
		buf = append(buf, eb...)
	}
	buf = append(buf, '}')
	return buf, nil
}

func appendNullableString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendString(dst, *s)
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
