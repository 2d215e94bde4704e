package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
)

// Enforcement modes (CTK.md §1 mode).
const (
	ModeEnforce      = "enforce"
	ModeEvaluateOnly = "evaluate_only"
)

// Composition profiles and knob values (CTK.md §5.9).
const (
	ProfileSequentialFirstDeny = "sequential/first_deny"
	ProfileSequentialRunAll    = "sequential/run_all"
	ProfileParallelStrictest   = "parallel/strictest"
	ProfileParallelUnanimous   = "parallel/unanimous"

	OnApprovalStop   = "stop"
	OnApprovalResume = "resume"
	SynthesisDeny    = "deny"
	SynthesisApprove = "approval"
)

// Identity providers a vector can name (CTK.md §1 identity_provider).
const (
	IdentityProviderJCS   = "jcs-sha256"
	IdentityProviderFault = "ctk-fault"
)

// Scripted fault forms (CTK.md §3.2, §4.2).
const (
	FaultRaise            = "raise"
	FaultMalformedVerdict = "malformed_verdict"
	FaultMutate           = "mutate"
)

// InterceptionPoints lists the eight points in lifecycle order (spec §3).
func InterceptionPoints() []string {
	return []string{
		"agent_startup", "input", "pre_model_call", "post_model_call",
		"pre_tool_call", "post_tool_call", "output", "agent_shutdown",
	}
}

// Vector is one decoded CTK vector. Typed members are the ones a runner
// or harness interprets; members replayed or compared verbatim (verdicts,
// match values, expected values, tool returns) stay JSON value trees with
// numbers as json.Number.
type Vector struct {
	// File is the base name of the file the vector was loaded from.
	File string
	// ID is the bare vector id, e.g. AH-CTK-001.
	ID         string
	Title      string
	SpecClause string
	// Part is the report grouping tag; "" when the vector has none.
	Part string
	// Capabilities must all be declared by the host or the vector is
	// skipped. Never nil.
	Capabilities []string
	// Mode is ModeEnforce (also when absent) or ModeEvaluateOnly.
	Mode             string
	Composition      Composition
	IdentityProvider IdentityProviderSpec
	Scenario         Scenario
	// ApprovalScript holds the resolver rules; empty (absent or []) means
	// no resolver is registered.
	ApprovalScript []ApprovalRule
	// RedactForApproval lists the $target paths the approval redactor
	// replaces with "[redacted]"; empty means no redactor.
	RedactForApproval []string
	Expect            Expect
	// Raw is the whole vector as a value tree.
	Raw map[string]any

	script     []Rule   // interceptor_script
	scripts    [][]Rule // interceptor_scripts
	hasScripts bool     // interceptor_scripts was present (it wins)
	source     []byte
}

// InterceptorScripts returns one rule list per interceptor to register,
// in registration order. interceptor_scripts is used verbatim, so [] gives
// zero interceptors; otherwise interceptor_script is one interceptor,
// so [] gives a single allow-all interceptor.
func (v *Vector) InterceptorScripts() [][]Rule {
	if v.hasScripts {
		out := make([][]Rule, len(v.scripts))
		copy(out, v.scripts)
		return out
	}
	script := v.script
	if script == nil {
		script = []Rule{}
	}
	return [][]Rule{script}
}

// HasResolver reports whether a scripted approval resolver is registered.
func (v *Vector) HasResolver() bool { return len(v.ApprovalScript) > 0 }

// Clone returns an independent copy of v (re-decoded from its source),
// or v itself when v was not produced by ParseVector.
func (v *Vector) Clone() *Vector {
	if v.source == nil {
		return v
	}
	c, err := ParseVector(v.File, v.source)
	if err != nil {
		return v // cannot happen: the source already parsed once
	}
	return c
}

// Composition is the composition profile and knobs the host must
// configure. Unset knobs are "": the profile's normative default applies
// (see WithDefaults).
type Composition struct {
	Profile             string
	OnApproval          string
	OnDisagreement      string
	OnTransformConflict string
	// Defaulted is true when the vector had no composition, or one the
	// CTK could not parse, and sequential/first_deny + stop was substituted.
	Defaulted bool
}

// DefaultComposition is what an absent or unparseable composition means.
func DefaultComposition() Composition {
	return Composition{Profile: ProfileSequentialFirstDeny, OnApproval: OnApprovalStop, Defaulted: true}
}

// WithDefaults fills the knobs the profile consults with their
// normative defaults and clears the knobs it never reads (CTK.md §5.9),
// which is the block a record's composition member carries.
func (c Composition) WithDefaults() Composition {
	or := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	out := Composition{Profile: c.Profile, Defaulted: c.Defaulted}
	switch c.Profile {
	case ProfileSequentialFirstDeny:
		out.OnApproval = or(c.OnApproval, OnApprovalStop)
	case ProfileParallelStrictest:
		out.OnTransformConflict = or(c.OnTransformConflict, SynthesisDeny)
	case ProfileParallelUnanimous:
		out.OnDisagreement = or(c.OnDisagreement, SynthesisDeny)
	}
	return out
}

// IdentityProviderSpec keeps the three forms of identity_provider apart:
// key absent (jcs-sha256), explicit null (the null provider), or a name.
type IdentityProviderSpec struct {
	// Present is true when the vector has the identity_provider key.
	Present bool
	// Name is the provider name; nil when absent or null.
	Name *string
}

// Provider resolves the spec: it returns the provider name and true, or
// "" and false for the null (identity-unbound) provider.
func (p IdentityProviderSpec) Provider() (string, bool) {
	switch {
	case !p.Present:
		return IdentityProviderJCS, true
	case p.Name == nil:
		return "", false
	default:
		return *p.Name, true
	}
}

// Scenario is the mocked input, tools and model of a vector.
type Scenario struct {
	Input       Input
	Tools       []Tool      // never nil
	ModelScript []ModelTurn // never nil
}

// ToolNames returns the scenario's tool names sorted, as
// agent_init.tools_registered carries them; never nil.
func (s Scenario) ToolNames() []string {
	names := make([]string, 0, len(s.Tools))
	for _, t := range s.Tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return names
}

// Tool returns the scenario tool with the given name.
func (s Scenario) Tool(name string) (Tool, bool) {
	for _, t := range s.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Input is the scenario's single user-turn input.
type Input struct {
	Content any
	Role    string
}

// Tool is a mock tool and its behavior table.
type Tool struct {
	Name     string
	Schema   any // ignored by every harness
	Behavior []Behavior
}

// Dispatch picks the first behavior clause that has no when_args or whose
// when_args is JSON-equal to args, and returns a deep copy of its return
// value. ok is false when no clause matches (a harness error, never a
// verdict outcome).
func (t Tool) Dispatch(args any) (ret any, isError bool, ok bool) {
	for _, b := range t.Behavior {
		if b.WhenArgs == nil || JSONEqual(b.WhenArgs, args) {
			return CloneValue(b.Return), b.IsError, true
		}
	}
	return nil, false, false
}

// Behavior is one {when_args?, return, is_error?} clause.
type Behavior struct {
	// WhenArgs is nil when the clause matches any arguments.
	WhenArgs map[string]any
	Return   any
	IsError  bool
}

// ModelTurn is one model_script entry: the response to the N-th model call.
type ModelTurn struct {
	Respond Response
}

// Response is a scripted model response.
type Response struct {
	Content      any        // may be nil (JSON null)
	ToolCalls    []ToolCall // never nil
	FinishReason string
	// Stream and StreamTruncated drive incremental_output hosts only.
	Stream          []string
	StreamTruncated bool
	// Raw is the respond object as a value tree.
	Raw map[string]any
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	ID   string
	Name string
	// Args is the arguments object; {} when the vector omits it.
	Args map[string]any
}

// Rule is one scripted interceptor rule (CTK.md §3.1).
type Rule struct {
	At string
	// Match maps dotted paths to expected values; nil always holds.
	Match map[string]any
	// Return is the verdict replayed verbatim; meaningful when HasReturn.
	Return    any
	HasReturn bool
	// Fault is "", FaultRaise, FaultMalformedVerdict or FaultMutate; an
	// unknown fault falls through to Return.
	Fault string
}

// Applies reports whether the rule fires for ctx: its at equals the
// context's interception_point ("" when missing) and MatchAll holds.
func (r Rule) Applies(ctx any) bool {
	point := ""
	if p, ok := Lookup(ctx, "interception_point"); ok {
		point, _ = p.(string)
	}
	return r.At == point && MatchAll(ctx, r.Match)
}

// Verdict returns a fresh copy of the verdict the rule replays when it
// has no (known) fault: Return, or {"decision":"allow"} when absent.
func (r Rule) Verdict() any {
	if !r.HasReturn {
		return allowVerdict()
	}
	return CloneValue(r.Return)
}

// FirstMatch scans rules top-down and returns the first that Applies to
// ctx; false means no rule fires and the interceptor allows.
func FirstMatch(rules []Rule, ctx any) (Rule, bool) {
	for _, r := range rules {
		if r.Applies(ctx) {
			return r, true
		}
	}
	return Rule{}, false
}

func allowVerdict() map[string]any { return map[string]any{"decision": "allow"} }

// ApprovalRule is one scripted resolver rule (CTK.md §4.1).
type ApprovalRule struct {
	// Match is evaluated against the approval request's context; nil
	// always holds. There is no at.
	Match   map[string]any
	Resolve Resolve
}

// Resolve is an approval rule's scripted answer.
type Resolve struct {
	// Outcome is approve, reject or unresolved ("" with a fault).
	Outcome string
	// Verdict is carried verbatim; meaningful when HasVerdict.
	Verdict    any
	HasVerdict bool
	// IdentityOverride replaces the echoed identity when non-nil.
	IdentityOverride *string
	// EchoRecomputed echoes the identity recomputed over the received
	// context; it overrides IdentityOverride.
	EchoRecomputed bool
	// Fault is FaultRaise or "".
	Fault string
}

// FirstApprovalMatch returns the first resolver rule whose match holds on
// the request context; false means the resolver answers unresolved.
func FirstApprovalMatch(rules []ApprovalRule, ctx any) (ApprovalRule, bool) {
	for _, r := range rules {
		if MatchAll(ctx, r.Match) {
			return r, true
		}
	}
	return ApprovalRule{}, false
}

// Expect is a vector's assertions (CTK.md §5). Expected values are value
// trees; Has* flags distinguish an absent member from an explicit null.
type Expect struct {
	Interceptions []ExpectedInterception
	// SequenceStrict selects exact (default) or subsequence matching.
	SequenceStrict      bool
	InterceptionsAbsent []string
	RunOutcome          string
	RunOutcomeByPosture *PostureOutcome
	FinalOutput         any
	HasFinalOutput      bool
	ToolInvocations     []any
	HasToolInvocations  bool
	ToolNotInvoked      []string
	IdentitiesEqual     *bool
	Records             []ExpectedRecord
	HasRecords          bool
	ReleasedOutput      any
	HasReleasedOutput   bool
	// PersistedMustNotContain lists substrings absent from RunRecord.Persisted.
	PersistedMustNotContain []string
}

// ExpectedInterception is one entry of expect.interceptions.
type ExpectedInterception struct {
	InterceptionPoint string
	// Context maps dotted paths to expected values.
	Context map[string]any
	// ContextMustValidate runs the envelope check (default true).
	ContextMustValidate   bool
	ContextMustContain    []string
	ContextMustNotContain []string
}

// PostureOutcome is expect.run_outcome_by_posture.
type PostureOutcome struct {
	Posture  string
	Outcomes map[string]string
}

// ExpectedRecord is one entry of expect.records.
type ExpectedRecord struct {
	InterceptionPoint string
	Assert            map[string]any
	Absent            []string
	Present           []string
}

// LoadVectors reads every AH-CTK-*.json file in dir of fsys, sorted by
// file name. Finding no file, a file that does not decode, or two files
// with the same id is an error naming the file.
func LoadVectors(fsys fs.FS, dir string) ([]*Vector, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "AH-CTK-*.json"))
	if err != nil {
		return nil, fmt.Errorf("conformance: list vectors in %q: %w", dir, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("conformance: no AH-CTK-*.json vectors in %q", dir)
	}
	sort.Slice(names, func(i, j int) bool { return path.Base(names[i]) < path.Base(names[j]) })
	vectors := make([]*Vector, 0, len(names))
	seen := make(map[string]string, len(names))
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("conformance: read vector %s: %w", name, err)
		}
		v, err := ParseVector(path.Base(name), data)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[v.ID]; dup {
			return nil, fmt.Errorf("conformance: vector %s: id %s already used by %s", v.File, v.ID, prev)
		}
		seen[v.ID] = v.File
		vectors = append(vectors, v)
	}
	return vectors, nil
}

// ParseVector decodes one vector; file names the source in errors. The
// decode is strict about JSON syntax, member types, required members,
// unknown members where the schema closes an object, the closed sets
// mode, identity_provider and interception-point names, and the
// interceptor_script / interceptor_scripts exclusivity. It is lenient
// where the CTK defines a fallback: composition (unparseable means the
// default), and capability strings (unknown ones only cause skips).
func ParseVector(file string, data []byte) (*Vector, error) {
	v, err := parseVector(data)
	if err != nil {
		return nil, fmt.Errorf("conformance: vector %s: %w", file, err)
	}
	v.File = file
	v.source = data
	return v, nil
}

func parseVector(data []byte) (*Vector, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // integers beyond 2^53 and beyond u64 must survive as tokens
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("decode: trailing data after the vector object")
	}
	top, err := object(root, "$")
	if err != nil {
		return nil, err
	}
	if err := closed(top, "$", "id", "title", "spec_clause", "part", "mode", "capabilities",
		"composition", "identity_provider", "scenario", "interceptor_script",
		"interceptor_scripts", "approval_script", "redact_for_approval", "expect"); err != nil {
		return nil, err
	}
	v := &Vector{Raw: top, Mode: ModeEnforce, Composition: DefaultComposition()}
	if v.ID, err = reqString(top, "$", "id"); err != nil {
		return nil, err
	}
	if v.Title, err = reqString(top, "$", "title"); err != nil {
		return nil, err
	}
	if v.SpecClause, err = reqString(top, "$", "spec_clause"); err != nil {
		return nil, err
	}
	if v.Part, err = optString(top, "$", "part"); err != nil {
		return nil, err
	}
	if v.Capabilities, err = optStrings(top, "$", "capabilities"); err != nil {
		return nil, err
	}
	if raw, ok := top["mode"]; ok {
		if v.Mode, err = str(raw, "$.mode"); err != nil {
			return nil, err
		}
		if v.Mode != ModeEnforce && v.Mode != ModeEvaluateOnly {
			return nil, fmt.Errorf("$.mode: unknown mode %q", v.Mode)
		}
	}
	if raw, ok := top["composition"]; ok {
		v.Composition = parseComposition(raw)
	}
	if raw, ok := top["identity_provider"]; ok {
		v.IdentityProvider.Present = true
		if raw != nil {
			name, err := str(raw, "$.identity_provider")
			if err != nil {
				return nil, err
			}
			if name != IdentityProviderJCS && name != IdentityProviderFault {
				return nil, fmt.Errorf("$.identity_provider: %q is not jcs-sha256, ctk-fault or null", name)
			}
			v.IdentityProvider.Name = &name
		}
	}
	rawScenario, ok := top["scenario"]
	if !ok {
		return nil, errors.New("$: missing required member \"scenario\"")
	}
	if v.Scenario, err = parseScenario(rawScenario, "$.scenario"); err != nil {
		return nil, err
	}
	if err := v.parseScripts(top); err != nil {
		return nil, err
	}
	if raw, ok := top["approval_script"]; ok {
		if v.ApprovalScript, err = parseApprovalScript(raw, "$.approval_script"); err != nil {
			return nil, err
		}
	}
	if v.RedactForApproval, err = optStrings(top, "$", "redact_for_approval"); err != nil {
		return nil, err
	}
	rawExpect, ok := top["expect"]
	if !ok {
		return nil, errors.New("$: missing required member \"expect\"")
	}
	if v.Expect, err = parseExpect(rawExpect, "$.expect"); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *Vector) parseScripts(top map[string]any) error {
	rawOne, hasOne := top["interceptor_script"]
	rawMany, hasMany := top["interceptor_scripts"]
	switch {
	case hasOne && hasMany:
		return errors.New("$: interceptor_script and interceptor_scripts are mutually exclusive")
	case !hasOne && !hasMany:
		return errors.New("$: one of interceptor_script or interceptor_scripts is required")
	case hasOne:
		rules, err := parseRules(rawOne, "$.interceptor_script")
		v.script = rules
		return err
	}
	lists, err := array(rawMany, "$.interceptor_scripts")
	if err != nil {
		return err
	}
	v.hasScripts = true
	v.scripts = make([][]Rule, len(lists))
	for i, l := range lists {
		if v.scripts[i], err = parseRules(l, fmt.Sprintf("$.interceptor_scripts[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// parseComposition applies the CTK fallback: anything that is not an
// object with a known profile and known knob values (null counts as
// unset; unknown members are ignored) means the default composition.
func parseComposition(raw any) Composition {
	m, ok := raw.(map[string]any)
	if !ok {
		return DefaultComposition()
	}
	known := func(key string, allowed ...string) (string, bool) {
		x, present := m[key]
		if !present || x == nil {
			return "", true
		}
		s, ok := x.(string)
		return s, ok && slices.Contains(allowed, s)
	}
	var c Composition
	var okP, okA, okD, okT bool
	c.Profile, okP = known("profile", ProfileSequentialFirstDeny, ProfileSequentialRunAll,
		ProfileParallelStrictest, ProfileParallelUnanimous)
	c.OnApproval, okA = known("on_approval", OnApprovalStop, OnApprovalResume)
	c.OnDisagreement, okD = known("on_disagreement", SynthesisDeny, SynthesisApprove)
	c.OnTransformConflict, okT = known("on_transform_conflict", SynthesisDeny, SynthesisApprove)
	if !okP || !okA || !okD || !okT || c.Profile == "" {
		return DefaultComposition()
	}
	return c
}

func parseScenario(raw any, at string) (Scenario, error) {
	var s Scenario
	m, err := object(raw, at)
	if err != nil {
		return s, err
	}
	if err := closed(m, at, "input", "tools", "model_script"); err != nil {
		return s, err
	}
	rawInput, ok := m["input"]
	if !ok {
		return s, fmt.Errorf("%s: missing required member \"input\"", at)
	}
	in, err := object(rawInput, at+".input")
	if err != nil {
		return s, err
	}
	if s.Input.Content, ok = in["content"]; !ok {
		return s, fmt.Errorf("%s.input: missing required member \"content\"", at)
	}
	if s.Input.Role, err = reqString(in, at+".input", "role"); err != nil {
		return s, err
	}
	tools, err := optArray(m, at, "tools")
	if err != nil {
		return s, err
	}
	s.Tools = make([]Tool, len(tools))
	for i, rt := range tools {
		if s.Tools[i], err = parseTool(rt, fmt.Sprintf("%s.tools[%d]", at, i)); err != nil {
			return s, err
		}
	}
	turns, err := optArray(m, at, "model_script")
	if err != nil {
		return s, err
	}
	s.ModelScript = make([]ModelTurn, len(turns))
	for i, rt := range turns {
		p := fmt.Sprintf("%s.model_script[%d]", at, i)
		tm, err := object(rt, p)
		if err != nil {
			return s, err
		}
		rr, ok := tm["respond"]
		if !ok {
			return s, fmt.Errorf("%s: missing required member \"respond\"", p)
		}
		if s.ModelScript[i].Respond, err = parseResponse(rr, p+".respond"); err != nil {
			return s, err
		}
	}
	return s, nil
}

func parseTool(raw any, at string) (Tool, error) {
	var t Tool
	m, err := object(raw, at)
	if err != nil {
		return t, err
	}
	if t.Name, err = reqString(m, at, "name"); err != nil {
		return t, err
	}
	t.Schema = m["schema"]
	rawB, ok := m["behavior"]
	if !ok {
		return t, fmt.Errorf("%s: missing required member \"behavior\"", at)
	}
	clauses, err := array(rawB, at+".behavior")
	if err != nil {
		return t, err
	}
	t.Behavior = make([]Behavior, len(clauses))
	for i, rc := range clauses {
		p := fmt.Sprintf("%s.behavior[%d]", at, i)
		c, err := object(rc, p)
		if err != nil {
			return t, err
		}
		b := &t.Behavior[i]
		if w, ok := c["when_args"]; ok {
			if b.WhenArgs, err = object(w, p+".when_args"); err != nil {
				return t, err
			}
		}
		if b.Return, ok = c["return"]; !ok {
			return t, fmt.Errorf("%s: missing required member \"return\"", p)
		}
		if b.IsError, err = optBool(c, p, "is_error", false); err != nil {
			return t, err
		}
	}
	return t, nil
}

func parseResponse(raw any, at string) (Response, error) {
	var r Response
	m, err := object(raw, at)
	if err != nil {
		return r, err
	}
	r.Raw = m
	var ok bool
	if r.Content, ok = m["content"]; !ok {
		return r, fmt.Errorf("%s: missing required member \"content\"", at)
	}
	if r.FinishReason, err = reqString(m, at, "finish_reason"); err != nil {
		return r, err
	}
	rawCalls, ok := m["tool_calls"]
	if !ok {
		return r, fmt.Errorf("%s: missing required member \"tool_calls\"", at)
	}
	calls, err := array(rawCalls, at+".tool_calls")
	if err != nil {
		return r, err
	}
	r.ToolCalls = make([]ToolCall, len(calls))
	for i, rc := range calls {
		p := fmt.Sprintf("%s.tool_calls[%d]", at, i)
		c, err := object(rc, p)
		if err != nil {
			return r, err
		}
		tc := &r.ToolCalls[i]
		if tc.ID, err = reqString(c, p, "id"); err != nil {
			return r, err
		}
		if tc.Name, err = reqString(c, p, "name"); err != nil {
			return r, err
		}
		tc.Args = map[string]any{}
		if a, ok := c["args"]; ok {
			if tc.Args, err = object(a, p+".args"); err != nil {
				return r, err
			}
		}
	}
	if r.Stream, err = optStrings(m, at, "stream"); err != nil {
		return r, err
	}
	if len(r.Stream) == 0 {
		r.Stream = nil
	}
	if r.StreamTruncated, err = optBool(m, at, "stream_truncated", false); err != nil {
		return r, err
	}
	return r, nil
}

func parseRules(raw any, at string) ([]Rule, error) {
	items, err := array(raw, at)
	if err != nil {
		return nil, err
	}
	rules := make([]Rule, len(items))
	for i, ri := range items {
		p := fmt.Sprintf("%s[%d]", at, i)
		m, err := object(ri, p)
		if err != nil {
			return nil, err
		}
		if err := closed(m, p, "at", "match", "return", "fault"); err != nil {
			return nil, err
		}
		r := &rules[i]
		if r.At, err = reqString(m, p, "at"); err != nil {
			return nil, err
		}
		if err := checkPoint(r.At, p+".at"); err != nil {
			return nil, err
		}
		if r.Match, err = optObject(m, p, "match"); err != nil {
			return nil, err
		}
		r.Return, r.HasReturn = m["return"]
		if r.Fault, err = optString(m, p, "fault"); err != nil {
			return nil, err
		}
	}
	return rules, nil
}

func parseApprovalScript(raw any, at string) ([]ApprovalRule, error) {
	items, err := array(raw, at)
	if err != nil {
		return nil, err
	}
	rules := make([]ApprovalRule, len(items))
	for i, ri := range items {
		p := fmt.Sprintf("%s[%d]", at, i)
		m, err := object(ri, p)
		if err != nil {
			return nil, err
		}
		if err := closed(m, p, "match", "resolve"); err != nil {
			return nil, err
		}
		r := &rules[i]
		if r.Match, err = optObject(m, p, "match"); err != nil {
			return nil, err
		}
		rawRes, ok := m["resolve"]
		if !ok {
			return nil, fmt.Errorf("%s: missing required member \"resolve\"", p)
		}
		rp := p + ".resolve"
		res, err := object(rawRes, rp)
		if err != nil {
			return nil, err
		}
		if r.Resolve.Outcome, err = optString(res, rp, "outcome"); err != nil {
			return nil, err
		}
		r.Resolve.Verdict, r.Resolve.HasVerdict = res["verdict"]
		if x, ok := res["identity_override"]; ok {
			s, err := str(x, rp+".identity_override")
			if err != nil {
				return nil, err
			}
			r.Resolve.IdentityOverride = &s
		}
		if r.Resolve.EchoRecomputed, err = optBool(res, rp, "echo_recomputed", false); err != nil {
			return nil, err
		}
		if r.Resolve.Fault, err = optString(res, rp, "fault"); err != nil {
			return nil, err
		}
	}
	return rules, nil
}

func parseExpect(raw any, at string) (Expect, error) {
	var e Expect
	m, err := object(raw, at)
	if err != nil {
		return e, err
	}
	if err := closed(m, at, "interceptions", "sequence_strict", "interceptions_absent",
		"tool_invocations", "tool_not_invoked", "final_output", "released_output",
		"persisted_must_not_contain", "run_outcome", "run_outcome_by_posture",
		"identities_equal", "records"); err != nil {
		return e, err
	}
	rawI, ok := m["interceptions"]
	if !ok {
		return e, fmt.Errorf("%s: missing required member \"interceptions\"", at)
	}
	items, err := array(rawI, at+".interceptions")
	if err != nil {
		return e, err
	}
	e.Interceptions = make([]ExpectedInterception, len(items))
	for i, it := range items {
		if e.Interceptions[i], err = parseExpectedInterception(it, fmt.Sprintf("%s.interceptions[%d]", at, i)); err != nil {
			return e, err
		}
	}
	if e.SequenceStrict, err = optBool(m, at, "sequence_strict", true); err != nil {
		return e, err
	}
	if e.InterceptionsAbsent, err = optStrings(m, at, "interceptions_absent"); err != nil {
		return e, err
	}
	for i, p := range e.InterceptionsAbsent {
		if err := checkPoint(p, fmt.Sprintf("%s.interceptions_absent[%d]", at, i)); err != nil {
			return e, err
		}
	}
	if e.RunOutcome, err = reqString(m, at, "run_outcome"); err != nil {
		return e, err
	}
	if raw, ok := m["run_outcome_by_posture"]; ok {
		if e.RunOutcomeByPosture, err = parsePostureOutcome(raw, at+".run_outcome_by_posture"); err != nil {
			return e, err
		}
	}
	e.FinalOutput, e.HasFinalOutput = m["final_output"]
	if raw, ok := m["tool_invocations"]; ok {
		if e.ToolInvocations, err = array(raw, at+".tool_invocations"); err != nil {
			return e, err
		}
		e.HasToolInvocations = true
	}
	if e.ToolNotInvoked, err = optStrings(m, at, "tool_not_invoked"); err != nil {
		return e, err
	}
	if raw, ok := m["identities_equal"]; ok {
		b, ok := raw.(bool)
		if !ok {
			return e, typeError(at+".identities_equal", "a boolean", raw)
		}
		e.IdentitiesEqual = &b
	}
	if raw, ok := m["records"]; ok {
		recs, err := array(raw, at+".records")
		if err != nil {
			return e, err
		}
		e.HasRecords = true
		e.Records = make([]ExpectedRecord, len(recs))
		for i, r := range recs {
			if e.Records[i], err = parseExpectedRecord(r, fmt.Sprintf("%s.records[%d]", at, i)); err != nil {
				return e, err
			}
		}
	}
	e.ReleasedOutput, e.HasReleasedOutput = m["released_output"]
	if e.PersistedMustNotContain, err = optStrings(m, at, "persisted_must_not_contain"); err != nil {
		return e, err
	}
	return e, nil
}

func parseExpectedInterception(raw any, at string) (ExpectedInterception, error) {
	var x ExpectedInterception
	m, err := object(raw, at)
	if err != nil {
		return x, err
	}
	if x.InterceptionPoint, err = reqString(m, at, "interception_point"); err != nil {
		return x, err
	}
	if err := checkPoint(x.InterceptionPoint, at+".interception_point"); err != nil {
		return x, err
	}
	if x.Context, err = optObject(m, at, "context"); err != nil {
		return x, err
	}
	if x.ContextMustValidate, err = optBool(m, at, "context_must_validate", true); err != nil {
		return x, err
	}
	if x.ContextMustContain, err = optStrings(m, at, "context_must_contain"); err != nil {
		return x, err
	}
	if x.ContextMustNotContain, err = optStrings(m, at, "context_must_not_contain"); err != nil {
		return x, err
	}
	return x, nil
}

func parsePostureOutcome(raw any, at string) (*PostureOutcome, error) {
	m, err := object(raw, at)
	if err != nil {
		return nil, err
	}
	if err := closed(m, at, "posture", "outcomes"); err != nil {
		return nil, err
	}
	p := &PostureOutcome{}
	if p.Posture, err = reqString(m, at, "posture"); err != nil {
		return nil, err
	}
	rawO, ok := m["outcomes"]
	if !ok {
		return nil, fmt.Errorf("%s: missing required member \"outcomes\"", at)
	}
	om, err := object(rawO, at+".outcomes")
	if err != nil {
		return nil, err
	}
	p.Outcomes = make(map[string]string, len(om))
	for k, x := range om {
		if p.Outcomes[k], err = str(x, at+".outcomes."+k); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func parseExpectedRecord(raw any, at string) (ExpectedRecord, error) {
	var r ExpectedRecord
	m, err := object(raw, at)
	if err != nil {
		return r, err
	}
	if err := closed(m, at, "interception_point", "assert", "absent", "present"); err != nil {
		return r, err
	}
	if r.InterceptionPoint, err = reqString(m, at, "interception_point"); err != nil {
		return r, err
	}
	if err := checkPoint(r.InterceptionPoint, at+".interception_point"); err != nil {
		return r, err
	}
	if r.Assert, err = optObject(m, at, "assert"); err != nil {
		return r, err
	}
	if r.Absent, err = optStrings(m, at, "absent"); err != nil {
		return r, err
	}
	if r.Present, err = optStrings(m, at, "present"); err != nil {
		return r, err
	}
	return r, nil
}

// ---- value-tree accessors; at is a JSONPath-like location for errors ----

func checkPoint(p, at string) error {
	if !slices.Contains(InterceptionPoints(), p) {
		return fmt.Errorf("%s: %q is not an interception point", at, p)
	}
	return nil
}

// closed rejects members outside allowed (schema additionalProperties: false).
func closed(m map[string]any, at string, allowed ...string) error {
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("%s: unknown member(s) %s", at, strings.Join(quoteAll(unknown), ", "))
	}
	return nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func typeError(at, want string, got any) error {
	return fmt.Errorf("%s: want %s, got %s", at, want, jsonKind(got))
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

func object(v any, at string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, typeError(at, "an object", v)
	}
	return m, nil
}

func array(v any, at string) ([]any, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, typeError(at, "an array", v)
	}
	return a, nil
}

func str(v any, at string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", typeError(at, "a string", v)
	}
	return s, nil
}

func reqString(m map[string]any, at, key string) (string, error) {
	x, ok := m[key]
	if !ok {
		return "", fmt.Errorf("%s: missing required member %q", at, key)
	}
	return str(x, at+"."+key)
}

func optString(m map[string]any, at, key string) (string, error) {
	x, ok := m[key]
	if !ok {
		return "", nil
	}
	return str(x, at+"."+key)
}

func optBool(m map[string]any, at, key string, def bool) (bool, error) {
	x, ok := m[key]
	if !ok {
		return def, nil
	}
	b, ok := x.(bool)
	if !ok {
		return false, typeError(at+"."+key, "a boolean", x)
	}
	return b, nil
}

func optObject(m map[string]any, at, key string) (map[string]any, error) {
	x, ok := m[key]
	if !ok {
		return nil, nil
	}
	return object(x, at+"."+key)
}

func optArray(m map[string]any, at, key string) ([]any, error) {
	x, ok := m[key]
	if !ok {
		return nil, nil
	}
	return array(x, at+"."+key)
}

// optStrings decodes an optional array of strings; absent gives an empty,
// non-nil slice.
func optStrings(m map[string]any, at, key string) ([]string, error) {
	items, err := optArray(m, at, key)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(items))
	for i, x := range items {
		if out[i], err = str(x, fmt.Sprintf("%s.%s[%d]", at, key, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}
