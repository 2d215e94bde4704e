// Package enforcement is a pure-Go engine for the AGENT-HOOKS-0.1 control
// contract: agent contexts and their envelope checks, verdicts and the §5
// gate, the four composition profiles, the approval seam, context identity
// providers, and payload-free interception records.
//
// The engine is transport-neutral: it imports no HTTP and no storage client.
// Hosts (the gateway, the SDK) build contexts with a Builder, emit them
// through an Emitter, and act on the returned Outcome.
package enforcement
