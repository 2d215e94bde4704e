// Package approvals resolves liftable denies (AGENT-HOOKS-0.1 §9) for the
// gateway: Webhook asks an external service, Queue parks the request until
// an administrator decides it (or its timeout passes) and keeps the pending
// requests in a Store (Memory for one replica, Redis for several).
//
// Both are enforcement.ApprovalResolver implementations. They see the
// context as the engine presents it, already redacted by the configured
// enforcement.ApprovalRedactor, and leave every §9 validation (echo rule,
// outcome/verdict consistency) to the engine, which reports each failure
// under its normative host_error reason.
package approvals
