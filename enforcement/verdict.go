package enforcement

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/targetpath"
)

// Decision is a verdict's decision (spec §5).
type Decision string

// The three decisions. Warn and escalate are shapes of allow and deny.
const (
	DecisionAllow     Decision = "allow"
	DecisionDeny      Decision = "deny"
	DecisionTransform Decision = "transform"
)

// MaxEvidenceBytes caps the RFC 8785 size of a verdict's evidence (§5.3).
const MaxEvidenceBytes = 10240

// Verdict is an interceptor's answer (spec §5). The zero value is invalid;
// use the constructors Allow, Deny, Warn, Escalate and TransformTo.
type Verdict struct {
	Decision Decision
	Reason   string
	Message  string
	Warnings []Warning
	// Approval marks a deny as liftable (§5.1). nil means absent; an empty
	// non-nil map is the usual "escalate" shape.
	Approval     map[string]any
	Transform    *Transform
	Evidence     *Evidence
	ResultLabels []string
}

// Warning is a recorded concern that does not affect control flow (§5.1).
type Warning struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Transform rewrites the value at Path inside the context's target (§5.2).
// A nil Value writes JSON null.
type Transform struct {
	Path  string
	Value any

	// adoptable is set by the emitter on the verdicts it accepts: Value
	// is a value tree no one but this verdict holds (but the objects a
	// session's memo keeps, which nothing modifies), so a transform of
	// the whole target may install it without another copy.
	adoptable bool
}

// Evidence is an opaque pointer to an offline-verifiable artefact (§5.3).
// Hosts never dereference it.
type Evidence struct {
	Artefact             *string           `json:"artefact,omitempty"`
	VerificationPointers map[string]string `json:"verification_pointers,omitempty"`
	// Extra holds the members of a decoded evidence object that the typed
	// fields do not (JSON value trees): members other than artefact and
	// verification_pointers, and those two when null. §5.3 has the host
	// propagate evidence unchanged, so they travel to the record as
	// received and count toward the size cap. A typed field that is set
	// wins over an Extra member of the same name.
	Extra map[string]any `json:"-"`
}

// Allow returns a plain allow verdict.
func Allow() Verdict { return Verdict{Decision: DecisionAllow} }

// Deny returns a plain (unliftable) deny.
func Deny(reason, message string) Verdict {
	return Verdict{Decision: DecisionDeny, Reason: reason, Message: message}
}

// Warn returns an allow carrying one warning (the spec's "warn" sugar).
func Warn(reason, message string) Verdict {
	return Verdict{Decision: DecisionAllow, Warnings: []Warning{{Reason: reason, Message: message}}}
}

// Escalate returns a liftable deny: a deny with an empty approval block.
func Escalate(reason, message string) Verdict {
	return Verdict{Decision: DecisionDeny, Reason: reason, Message: message, Approval: map[string]any{}}
}

// TransformTo returns a transform verdict replacing path with value.
func TransformTo(path string, value any) Verdict {
	return Verdict{Decision: DecisionTransform, Transform: &Transform{Path: path, Value: value}}
}

// IsPermit reports whether the verdict lets the action proceed.
func (v *Verdict) IsPermit() bool {
	return v.Decision == DecisionAllow || v.Decision == DecisionTransform
}

// Liftable reports whether v is a deny the approval seam may lift.
func (v *Verdict) Liftable() bool { return v.Decision == DecisionDeny && v.Approval != nil }

// severity is the §5.1 total order: deny > liftable deny > transform > allow.
func (v *Verdict) severity() int {
	switch v.Decision {
	case DecisionDeny:
		if v.Approval != nil {
			return 2
		}
		return 3
	case DecisionTransform:
		return 1
	}
	return 0
}

// hostDeny synthesizes a host_error deny. Its message never carries
// target-derived content (§6.3, §14).
func hostDeny(reason, message string) Verdict {
	return Verdict{Decision: DecisionDeny, Reason: reason, Message: message}
}

// ErrVerdictInvalid marks a value that fails the §5 gate. Interceptors that
// decode verdicts from the wire (ParseVerdict) return errors wrapping it, and
// the emitter substitutes host_error:verdict_invalid rather than
// host_error:interceptor_failed.
var ErrVerdictInvalid = errors.New("verdict invalid")

// gateError is a §5 gate failure carrying the reserved reason to substitute.
type gateError struct {
	reason string
	msg    string
}

func (e *gateError) Error() string { return e.msg }
func (e *gateError) Unwrap() error { return ErrVerdictInvalid }

func invalidf(format string, args ...any) error {
	return &gateError{reason: ReasonVerdictInvalid, msg: fmt.Sprintf(format, args...)}
}

// Validate runs the §5 gate for a verdict returned at point p. The returned
// error wraps ErrVerdictInvalid; GateReason tells which reserved reason a host
// substitutes for it.
func (v *Verdict) Validate(p Point) error {
	switch v.Decision {
	case DecisionAllow, DecisionDeny, DecisionTransform:
	default:
		// The decision may be anything a service wrote, even text it
		// copied from the context: it is not quoted.
		return invalidf("decision is not allow, deny or transform")
	}
	if IsHostError(v.Reason) {
		return invalidf("reason uses the reserved host_error: prefix")
	}
	for i := range v.Warnings {
		if IsHostError(v.Warnings[i].Reason) {
			return invalidf("warnings[%d].reason uses the reserved host_error: prefix", i)
		}
	}
	if v.Approval != nil && v.Decision != DecisionDeny {
		return invalidf("approval is only valid on deny")
	}
	if (v.Transform != nil) != (v.Decision == DecisionTransform) {
		if v.Transform == nil {
			return invalidf("transform decision without a transform body")
		}
		return invalidf("transform body on a %s verdict", v.Decision)
	}
	if v.Transform != nil {
		if _, err := targetpath.Parse(v.Transform.Path); err != nil {
			return pathGateError(err)
		}
		if !p.Transformable() {
			return &gateError{reason: ReasonTransformTargetForbidden, msg: fmt.Sprintf("transform is not permitted at %s", p)}
		}
	}
	if v.Evidence != nil {
		n, err := evidenceSize(v.Evidence)
		if err != nil {
			return invalidf("evidence cannot be canonicalized: %v", err)
		}
		if n > MaxEvidenceBytes {
			return invalidf("evidence is %d canonical bytes, over the %d-byte cap", n, MaxEvidenceBytes)
		}
	}
	return nil
}

// pathGateError classifies a transform path failure (§5.2, §11).
func pathGateError(err error) error {
	if errors.Is(err, targetpath.ErrTargetForbidden) {
		return &gateError{reason: ReasonTransformTargetForbidden, msg: err.Error()}
	}
	return &gateError{reason: ReasonTransformInvalid, msg: err.Error()}
}

// GateReason maps a §5 gate error to the reserved reason a host substitutes:
// transform_target_forbidden and transform_invalid for path failures,
// verdict_invalid otherwise.
func GateReason(err error) string {
	var g *gateError
	if errors.As(err, &g) {
		return g.reason
	}
	return ReasonVerdictInvalid
}

// evidenceSize is the §5.3 measure: the UTF-8 length of the RFC 8785 form
// of the evidence member as the interceptor returned it, every member
// included. It is not the length of the bytes the service sent: their
// whitespace, escapes and number spellings do not count.
func evidenceSize(e *Evidence) (int, error) {
	b, err := jcs.Canonicalize(e.tree())
	return len(b), err
}

// DecodeVerdict parses a verdict from JSON text with the §5 type checks.
func DecodeVerdict(data []byte) (Verdict, error) {
	tree, err := jsonvalue.Decode(data)
	if err != nil {
		return Verdict{}, fmt.Errorf("%w: not JSON: %v", ErrVerdictInvalid, err)
	}
	return ParseVerdict(tree)
}

// ParseVerdict converts a decoded JSON value into a Verdict, applying the
// type checks of §5 (not an object, wrong member types). Unknown members are
// dropped. Semantic checks that depend on the point run in Validate.
func ParseVerdict(tree any) (Verdict, error) {
	obj, ok := tree.(map[string]any)
	if !ok {
		return Verdict{}, invalidf("verdict is not a JSON object")
	}
	var v Verdict
	d, ok := obj["decision"].(string)
	if !ok {
		return Verdict{}, invalidf("decision is missing or not a string")
	}
	v.Decision = Decision(d)
	var err error
	if v.Reason, err = optString(obj, "reason"); err != nil {
		return Verdict{}, err
	}
	if v.Message, err = optString(obj, "message"); err != nil {
		return Verdict{}, err
	}
	if raw, ok := obj["warnings"]; ok && raw != nil {
		arr, ok := raw.([]any)
		if !ok {
			return Verdict{}, invalidf("warnings is not an array")
		}
		v.Warnings = make([]Warning, 0, len(arr))
		for i, w := range arr {
			wo, ok := w.(map[string]any)
			if !ok {
				return Verdict{}, invalidf("warnings[%d] is not an object", i)
			}
			var wr Warning
			if wr.Reason, err = optString(wo, "reason"); err != nil {
				return Verdict{}, err
			}
			if wr.Message, err = optString(wo, "message"); err != nil {
				return Verdict{}, err
			}
			v.Warnings = append(v.Warnings, wr)
		}
	}
	if raw, ok := obj["approval"]; ok {
		ao, ok := raw.(map[string]any)
		if !ok {
			return Verdict{}, invalidf("approval is not an object")
		}
		v.Approval = ao
	}
	if raw, ok := obj["transform"]; ok && raw != nil {
		to, ok := raw.(map[string]any)
		if !ok {
			return Verdict{}, invalidf("transform is not an object")
		}
		p, ok := to["path"].(string)
		if !ok {
			return Verdict{}, invalidf("transform.path is missing or not a string")
		}
		v.Transform = &Transform{Path: p, Value: to["value"]}
	}
	if raw, ok := obj["evidence"]; ok && raw != nil {
		eo, ok := raw.(map[string]any)
		if !ok {
			return Verdict{}, invalidf("evidence is not an object")
		}
		ev := &Evidence{Extra: evidenceExtra(eo)}
		switch a := eo["artefact"].(type) {
		case nil:
		case string:
			ev.Artefact = &a
		default:
			return Verdict{}, invalidf("evidence.artefact is not a string")
		}
		if rp, ok := eo["verification_pointers"]; ok && rp != nil {
			po, ok := rp.(map[string]any)
			if !ok {
				return Verdict{}, invalidf("evidence.verification_pointers is not an object")
			}
			ev.VerificationPointers = make(map[string]string, len(po))
			for k, u := range po {
				s, ok := u.(string)
				if !ok {
					return Verdict{}, invalidf("evidence.verification_pointers.%s is not a string", k)
				}
				ev.VerificationPointers[k] = s
			}
		}
		v.Evidence = ev
	}
	if raw, ok := obj["result_labels"]; ok && raw != nil {
		arr, ok := raw.([]any)
		if !ok {
			return Verdict{}, invalidf("result_labels is not an array")
		}
		v.ResultLabels = make([]string, 0, len(arr))
		for i, l := range arr {
			s, ok := l.(string)
			if !ok {
				return Verdict{}, invalidf("result_labels[%d] is not a string", i)
			}
			v.ResultLabels = append(v.ResultLabels, s)
		}
	}
	return v, nil
}

func optString(obj map[string]any, key string) (string, error) {
	switch s := obj[key].(type) {
	case nil:
		return "", nil
	case string:
		return s, nil
	default:
		return "", invalidf("%s is not a string", key)
	}
}

// UnmarshalJSON decodes a verdict with the §5 type checks.
func (v *Verdict) UnmarshalJSON(data []byte) error {
	parsed, err := DecodeVerdict(data)
	if err != nil {
		return err
	}
	*v = parsed
	return nil
}

// MarshalJSON encodes the full verdict. An empty approval block is kept as
// {} because its presence is what makes a deny liftable.
func (v Verdict) MarshalJSON() ([]byte, error) {
	return v.appendJSON(nil, false)
}

// appendJSON writes the verdict; projected selects the payload-free §10.3
// projection (messages truncated, approval stripped, transform value dropped).
func (v *Verdict) appendJSON(dst []byte, projected bool) ([]byte, error) {
	buf := append(dst, `{"decision":`...)
	buf = appendString(buf, string(v.Decision))
	if v.Reason != "" {
		buf = append(buf, `,"reason":`...)
		buf = appendString(buf, v.Reason)
	}
	if v.Message != "" {
		buf = append(buf, `,"message":`...)
		buf = appendString(buf, maybeTruncate(v.Message, projected))
	}
	if len(v.Warnings) > 0 {
		buf = append(buf, `,"warnings":[`...)
		for i, w := range v.Warnings {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '{')
			sep := false
			if w.Reason != "" {
				buf = append(buf, `"reason":`...)
				buf = appendString(buf, w.Reason)
				sep = true
			}
			if w.Message != "" {
				if sep {
					buf = append(buf, ',')
				}
				buf = append(buf, `"message":`...)
				buf = appendString(buf, maybeTruncate(w.Message, projected))
			}
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	if v.Approval != nil {
		buf = append(buf, `,"approval":`...)
		if projected || len(v.Approval) == 0 {
			buf = append(buf, "{}"...)
		} else {
			b, err := jsonvalue.Marshal(v.Approval)
			if err != nil {
				return nil, fmt.Errorf("approval: %w", err)
			}
			buf = append(buf, b...)
		}
	}
	if v.Transform != nil {
		buf = append(buf, `,"transform":{"path":`...)
		buf = appendString(buf, v.Transform.Path)
		if !projected {
			buf = append(buf, `,"value":`...)
			b, err := jsonvalue.Marshal(v.Transform.Value)
			if err != nil {
				return nil, fmt.Errorf("transform.value: %w", err)
			}
			buf = append(buf, b...)
		}
		buf = append(buf, '}')
	}
	if v.Evidence != nil {
		b, err := json.Marshal(v.Evidence)
		if err != nil {
			return nil, fmt.Errorf("evidence: %w", err)
		}
		buf = append(buf, `,"evidence":`...)
		buf = append(buf, b...)
	}
	if len(v.ResultLabels) > 0 {
		buf = append(buf, `,"result_labels":[`...)
		for i, l := range v.ResultLabels {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, l)
		}
		buf = append(buf, ']')
	}
	buf = append(buf, '}')
	return buf, nil
}

// maxRecordMessageBytes bounds record messages (§10.3).
const maxRecordMessageBytes = 256

func maybeTruncate(s string, projected bool) string {
	if !projected {
		return s
	}
	return TruncateMessage(s)
}

// TruncateMessage cuts s to at most 256 UTF-8 bytes on a character boundary
// and appends "…" when it cut anything (the §10.3 record projection).
func TruncateMessage(s string) string {
	if len(s) <= maxRecordMessageBytes {
		return s
	}
	cut := maxRecordMessageBytes
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// writeString writes s as a JSON string, as appendString does.
func writeString(buf *bytes.Buffer, s string) {
	buf.Write(appendString(buf.AvailableBuffer(), s))
}

// appendString appends s as a JSON string without HTML escaping, exactly
// as encoding/json writes it. Record strings (ids, reasons, points,
// timestamps) are nearly always plain ASCII, which needs no escaping;
// only the others pay for an encoder.
func appendString(dst []byte, s string) []byte {
	if plainJSONString(s) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a Go string always encodes
	b := buf.Bytes()
	return b[:len(b)-1] // Encode's newline
}

// plainJSONString reports whether s is printable ASCII without '"' or '\\',
// which encoding/json writes verbatim between quotes.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
