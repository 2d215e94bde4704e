package approvals

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// DefaultTimeout is how long a queued request waits for a decision.
const DefaultTimeout = 2 * time.Minute

// ReasonRejected is the reason of an administrator's reject verdict.
const ReasonRejected = "approval:rejected"

// abandonTimeout bounds marking an approval unresolved after its client
// went away (the request's own context is already done then).
const abandonTimeout = 2 * time.Second

// Queue is an enforcement.ApprovalResolver that parks each request in a
// Store until an administrator decides it or Timeout passes; a request
// nobody decides in time resolves unresolved, which the engine enforces as
// deny host_error:approval_unresolved.
type Queue struct {
	store   Store
	timeout time.Duration
	now     func() time.Time
}

var _ enforcement.ApprovalResolver = (*Queue)(nil)

// NewQueue returns a queue over store; timeout 0 means DefaultTimeout.
func NewQueue(store Store, timeout time.Duration) *Queue {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Queue{store: store, timeout: timeout, now: time.Now}
}

// Timeout is how long a request waits for a decision.
func (q *Queue) Timeout() time.Duration { return q.timeout }

// Resolve implements enforcement.ApprovalResolver. A store failure is an
// error, which the engine turns into host_error:approval_resolver_failed.
func (q *Queue) Resolve(ctx context.Context, req enforcement.ApprovalRequest) (enforcement.ApprovalResolution, error) {
	a, err := q.newApproval(req)
	if err != nil {
		return enforcement.ApprovalResolution{}, err
	}
	if err := q.store.Put(ctx, a); err != nil {
		return enforcement.ApprovalResolution{}, err
	}
	wctx, cancel := context.WithDeadline(ctx, a.Deadline)
	defer cancel()
	d, err := q.store.Wait(wctx, a.ID)
	if err != nil {
		if ctx.Err() != nil {
			// The client went away: take the approval off the list.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
			defer cancel()
			_ = q.store.Decide(actx, a.ID, Decision{Outcome: enforcement.OutcomeUnresolved, Decided: q.now()})
			return enforcement.ApprovalResolution{}, ctx.Err()
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			return enforcement.ApprovalResolution{}, err
		}
		if d, err = q.expire(ctx, a.ID); err != nil {
			return enforcement.ApprovalResolution{}, err
		}
	}
	return resolution(req, d), nil
}

// expire decides the approval unresolved, unless an administrator's
// decision won the race, which then stands.
func (q *Queue) expire(ctx context.Context, id string) (Decision, error) {
	d := Decision{Outcome: enforcement.OutcomeUnresolved, Decided: q.now()}
	err := q.store.Decide(ctx, id, d)
	if errors.Is(err, ErrConflict) {
		a, err := q.store.Get(ctx, id)
		if err != nil {
			return Decision{}, err
		}
		return *a.Decision, nil
	}
	return d, err
}

// List returns the pending approvals, oldest first.
func (q *Queue) List(ctx context.Context) ([]Approval, error) { return q.store.List(ctx) }

// Get returns one approval, pending or decided (ErrNotFound).
func (q *Queue) Get(ctx context.Context, id string) (Approval, error) {
	return q.store.Get(ctx, id)
}

// Decide records an administrator's decision: outcome Approve or Reject,
// an optional message, and on Approve an optional transform. It returns
// ErrNotFound, ErrConflict (already decided or timed out), or an error
// describing an invalid decision.
func (q *Queue) Decide(ctx context.Context, id string, d Decision) error {
	a, err := q.store.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := validDecision(a.Point, d); err != nil {
		return err
	}
	d.Decided = q.now()
	return q.store.Decide(ctx, id, d)
}

// InvalidDecisionError is a decision the queue refuses to record.
type InvalidDecisionError struct{ msg string }

// Error describes what is wrong with the decision.
func (e *InvalidDecisionError) Error() string { return "invalid decision: " + e.msg }

func validDecision(p enforcement.Point, d Decision) error {
	switch d.Outcome {
	case Approve, Reject:
	default:
		return &InvalidDecisionError{fmt.Sprintf("outcome must be %s or %s", Approve, Reject)}
	}
	if d.Transform == nil {
		return nil
	}
	if d.Outcome != Approve {
		return &InvalidDecisionError{"only an approval may carry a transform"}
	}
	v := enforcement.TransformTo(d.Transform.Path, d.Transform.Value)
	if err := v.Validate(p); err != nil {
		return &InvalidDecisionError{err.Error()}
	}
	return nil
}

func (q *Queue) newApproval(req enforcement.ApprovalRequest) (Approval, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Approval{}, fmt.Errorf("approvals: encode request: %w", err)
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Approval{}, fmt.Errorf("approvals: id: %w", err)
	}
	now := q.now()
	// The strings are cloned: the approval outlives the request, whose
	// context strings may slice its whole body (jsonvalue.Text).
	return Approval{
		ID:        hex.EncodeToString(b[:]),
		Created:   now,
		Deadline:  now.Add(q.timeout),
		Point:     req.InterceptionPoint,
		SessionID: strings.Clone(req.Context.SessionID()),
		Reason:    strings.Clone(req.Verdict.Reason),
		Message:   strings.Clone(req.Verdict.Message),
		Request:   body,
	}, nil
}

// resolution turns a decision into the §9 answer, echoing the request's
// context_identity (the queue is in-process: the identity it received is
// the one the administrator's page showed).
func resolution(req enforcement.ApprovalRequest, d Decision) enforcement.ApprovalResolution {
	res := enforcement.ApprovalResolution{Outcome: d.Outcome, ContextIdentity: req.ContextIdentity}
	var v enforcement.Verdict
	switch d.Outcome {
	case Approve:
		v = enforcement.Allow()
		if d.Transform != nil {
			v = enforcement.TransformTo(d.Transform.Path, d.Transform.Value)
		}
		v.Message = d.Message
	case Reject:
		msg := d.Message
		if msg == "" {
			msg = "rejected by an administrator"
		}
		v = enforcement.Deny(ReasonRejected, msg)
	default:
		return res
	}
	res.Verdict = &v
	return res
}
