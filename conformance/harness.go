// Package conformance is a pure-Go runner for the AGENT-HOOKS-0.1
// conformance test kit (CTK): it loads the upstream vectors, drives a
// Harness through each one, asserts the vector's expect block exactly as
// the upstream Rust engine does, and renders the §13.1 conformance report.
package conformance

import "context"

// Harness runs one vector's scenario on a host. The runner makes a fresh Harness per vector.
type Harness interface {
	// Declaration is the host's declared surface (capabilities, postures, etc.).
	Declaration() Declaration
	// Setup configures the host as the vector demands (mode, composition, identity provider, scripted interceptors, resolver, redactor).
	// The vector is the harness's own copy; the runner asserts against a separate one.
	Setup(v *Vector) error
	// Run drives the scenario's agent loop and reports what happened.
	Run(ctx context.Context) (*RunRecord, error)
	// Teardown releases resources; it runs even when Run fails.
	Teardown()
}

// HarnessFactory returns a new, unconfigured Harness.
type HarnessFactory func() Harness

// Declaration is a host's declared surface (§13.1). It selects which
// vectors run (capabilities), which outcome posture-dependent vectors
// expect (postures), and what the report discloses.
type Declaration struct {
	// Name identifies the host in reports, e.g. "sdk-local".
	Name string `json:"name"`
	// Capabilities are capability strings such as model_calls,
	// tool_calls, int64_json, bigint_json, incremental_output. A vector
	// runs only when every capability it lists is declared here.
	Capabilities []string `json:"capabilities"`
	// Postures maps a posture name to its declared value;
	// tool_seam_host_error is continue or terminate (default continue).
	Postures map[string]string `json:"postures,omitempty"`
	// BufferedOutput declares §12.1a buffered output (the spec default
	// is true; false must be disclosed in the claim).
	BufferedOutput bool `json:"buffered_output"`
	// ExposureBound states, for a host mediating incrementally (§12.1
	// exception), which content can reach the caller ahead of a verdict
	// covering it and how much (§12.1a); the claim must carry it.
	ExposureBound string `json:"exposure_bound,omitempty"`
	// Profiles lists the composition profiles the host supports.
	Profiles []string `json:"profiles,omitempty"`
	// IdentityProvider is the host's default identity provider, e.g. jcs-sha256.
	IdentityProvider string `json:"identity_provider,omitempty"`
}

// Capability strings the runner itself interprets.
const (
	// CapabilityIncrementalOutput gates the streaming/incremental part
	// and switches on the released_output / persisted_must_not_contain
	// assertions.
	CapabilityIncrementalOutput = "incremental_output"
)

// Posture names and values (CTK.md §7.3).
const (
	// PostureToolSeamHostError is the only posture AGENT-HOOKS-0.1 defines.
	PostureToolSeamHostError = "tool_seam_host_error"
	// PostureContinue is the spec-default tool_seam_host_error value.
	PostureContinue = "continue"
	// PostureTerminate is the permitted alternative tool_seam_host_error value.
	PostureTerminate = "terminate"
)

// Run outcomes a RunRecord may report.
const (
	OutcomeCompleted = "completed"
	OutcomeBlocked   = "blocked"
	OutcomeError     = "error"
)

// RunRecord is the harness's report (CTK.md §5.1). JSON-shaped members are value trees decoded with UseNumber (map[string]any, []any, string, json.Number, bool, nil).
//
// Other Go values (structs, float64, typed slices) are accepted too: the
// assertion engine converts them through encoding/json first, so they are
// judged exactly as their JSON encoding would be (a nil []string is null).
// Nil slices are treated as empty arrays.
type RunRecord struct {
	// Outcome is completed, blocked or error.
	Outcome string `json:"outcome"`
	// FinalOutput is the final output (null on a blocked run).
	FinalOutput any `json:"final_output"`
	// ToolInvocations is the mock-tool log in call order, with the
	// effective (post-transform) arguments.
	ToolInvocations []ToolInvocation `json:"tool_invocations"`
	// Interceptions holds the contexts as interceptor 0 saw them (deep
	// copies taken before rule evaluation), one per dispatched emission.
	Interceptions []any `json:"interceptions"`
	// Identities holds one pair per emission, in order.
	Identities []IdentityPair `json:"identities"`
	// Records holds the wire-shaped InterceptionRecords (decoded JSON), one per emission.
	Records []any `json:"records"`
	// Postures is filled by the runner from the harness's Declaration;
	// whatever the harness puts here is replaced.
	Postures map[string]string `json:"postures"`
	// ReleasedOutput is what actually egressed; only for incremental_output hosts.
	ReleasedOutput any `json:"released_output,omitempty"`
	// Persisted serializes every durable incorporation; only for incremental_output hosts.
	Persisted string `json:"persisted,omitempty"`
}

// ToolInvocation is one mock-tool call: the tool name and the
// arguments it actually received.
type ToolInvocation struct {
	Name string `json:"name"`
	Args any    `json:"args"`
}

// IdentityPair is one emission's (input_identity, enforced_identity);
// nil means the record carried null.
type IdentityPair struct {
	Input    *string `json:"input_identity"`
	Enforced *string `json:"enforced_identity"`
}
