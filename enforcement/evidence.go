package enforcement

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// evidenceKnown are the evidence members the Evidence type models.
func evidenceKnown(k string) bool { return k == "artefact" || k == "verification_pointers" }

// evidenceExtra returns the members of eo the typed fields do not hold:
// those other than artefact and verification_pointers, and those two when
// null (the schema allows "artefact": null, and §5.3 keeps it), or nil when
// there are none.
func evidenceExtra(eo map[string]any) map[string]any {
	var extra map[string]any
	for k, v := range eo {
		if evidenceKnown(k) && v != nil {
			continue
		}
		if extra == nil {
			extra = make(map[string]any, len(eo))
		}
		extra[k] = v
	}
	return extra
}

// tree returns the evidence as the JSON value tree it was decoded from:
// Extra, then the typed fields, which win over an Extra member of the same
// name.
func (e *Evidence) tree() map[string]any {
	m := make(map[string]any, len(e.Extra)+2)
	for k, v := range e.Extra {
		m[k] = v
	}
	if e.Artefact != nil {
		m["artefact"] = *e.Artefact
	}
	if e.VerificationPointers != nil {
		vp := make(map[string]any, len(e.VerificationPointers))
		for k, u := range e.VerificationPointers {
			vp[k] = u
		}
		m["verification_pointers"] = vp
	}
	return m
}

// MarshalJSON encodes the evidence with its extra members, keys sorted.
func (e Evidence) MarshalJSON() ([]byte, error) {
	return jsonvalue.Marshal(e.tree())
}

// clone returns a copy sharing nothing mutable with e.
func (e *Evidence) clone() *Evidence {
	c := *e
	if c.Artefact != nil {
		a := *c.Artefact
		c.Artefact = &a
	}
	if c.VerificationPointers != nil {
		vp := make(map[string]string, len(c.VerificationPointers))
		for k, u := range c.VerificationPointers {
			vp[k] = u
		}
		c.VerificationPointers = vp
	}
	if c.Extra != nil {
		c.Extra, _ = jsonvalue.DeepCopy(c.Extra).(map[string]any)
	}
	return &c
}
