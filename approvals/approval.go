package approvals

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Errors a Store and the Queue report; match them with errors.Is.
var (
	// ErrNotFound: no approval has that id (never created, or expired).
	ErrNotFound = errors.New("approval not found")
	// ErrConflict: the approval was already decided (or timed out).
	ErrConflict = errors.New("approval already decided")
)

// Outcomes an administrator can give; a request that times out is decided
// enforcement.OutcomeUnresolved by the queue itself.
const (
	Approve = enforcement.OutcomeApprove
	Reject  = enforcement.OutcomeReject
)

// Approval is one request held by the queue. It carries nothing the
// redactor removed: Request is the §9 ApprovalRequest exactly as a webhook
// would receive it, redacted context included.
type Approval struct {
	ID       string    `json:"id"`
	Created  time.Time `json:"created"`
	Deadline time.Time `json:"deadline"`
	// Point, SessionID, Reason and Message are copied out of Request for
	// listing.
	Point     enforcement.Point `json:"interception_point"`
	SessionID string            `json:"session_id"`
	Reason    string            `json:"reason"`
	Message   string            `json:"message,omitempty"`
	Request   json.RawMessage   `json:"request"`
	// Decision is nil while the approval is pending.
	Decision *Decision `json:"decision,omitempty"`
}

// Pending reports whether nobody has decided a yet.
func (a *Approval) Pending() bool { return a.Decision == nil }

// Decision is how an approval was decided.
type Decision struct {
	// Outcome is Approve, Reject or enforcement.OutcomeUnresolved (timed
	// out, or the waiting client went away).
	Outcome string `json:"outcome"`
	// Message explains the decision to the client (optional).
	Message string `json:"message,omitempty"`
	// Transform, on Approve only, lets the action proceed rewritten.
	Transform *Transform `json:"transform,omitempty"`
	Decided   time.Time  `json:"decided"`
}

// Transform is an approval's rewrite of the action: a §5.2 path and the
// value it replaces (JSON numbers as json.Number).
type Transform struct {
	Path  string `json:"path"`
	Value any    `json:"value"`
}
