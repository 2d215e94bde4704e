package approvals

import "context"

// Store keeps approvals where every replica can list and decide them and
// the replica holding the request can wait for the decision.
//
// Decide is the one synchronization point: it succeeds for exactly one
// caller per approval, whether an administrator or the queue timing the
// request out, so a late decision is a conflict rather than a lost write.
type Store interface {
	// Put stores a new pending approval; it is kept until its deadline
	// plus the store's retention.
	Put(ctx context.Context, a Approval) error
	// Get returns the approval, decided or not, or ErrNotFound.
	Get(ctx context.Context, id string) (Approval, error)
	// List returns the pending approvals whose deadline has not passed,
	// oldest first.
	List(ctx context.Context) ([]Approval, error)
	// Decide records d once: ErrNotFound for an unknown id, ErrConflict
	// when the approval is already decided.
	Decide(ctx context.Context, id string, d Decision) error
	// Wait blocks until the approval is decided and returns the decision,
	// or returns ctx's error.
	Wait(ctx context.Context, id string) (Decision, error)
}
