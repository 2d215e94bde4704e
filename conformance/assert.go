package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Assert runs every expect check of v against rr in the engine's order
// (CTK.md §5) and returns the failures; none means the vector passes.
// rr.Postures must already carry the declared postures (Run fills them).
// The released_output and persisted_must_not_contain checks run only
// when decl declares incremental_output, since only such hosts report
// those members.
func Assert(v *Vector, rr *RunRecord, decl Declaration) []string {
	a := &asserter{}
	recorded := a.trees("interception", rr.Interceptions)
	a.interceptions(&v.Expect, recorded)
	a.runLevel(&v.Expect, rr)
	a.records(&v.Expect, a.trees("record", rr.Records))
	a.sequence(recorded)
	a.identities(&v.Expect, rr)
	if slices.Contains(decl.Capabilities, CapabilityIncrementalOutput) {
		a.incremental(&v.Expect, rr)
	}
	return a.failures
}

type asserter struct {
	failures []string
}

func (a *asserter) failf(format string, args ...any) {
	a.failures = append(a.failures, fmt.Sprintf(format, args...))
}

// trees converts harness-reported values to value trees; a value that
// cannot be encoded is itself a failure and is judged as null.
func (a *asserter) trees(what string, vs []any) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		t, err := toPlainTree(v)
		if err != nil {
			a.failf("%s[%d] is not JSON-encodable: %v", what, i, err)
		}
		out[i] = t
	}
	return out
}

func (a *asserter) tree(what string, v any) any {
	t, err := toPlainTree(v)
	if err != nil {
		a.failf("%s is not JSON-encodable: %v", what, err)
	}
	return t
}

func pointOf(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	p, ok := m["interception_point"].(string)
	return p, ok
}

// interceptions checks expect.interceptions and interceptions_absent
// (CTK.md §5.3). A strict-sequence mismatch or a missing point returns
// early, skipping interceptions_absent too, as the oracle does.
func (a *asserter) interceptions(e *Expect, recorded []any) {
	var recPoints []string
	for _, c := range recorded {
		if p, ok := pointOf(c); ok {
			recPoints = append(recPoints, p)
		}
	}
	type pair struct {
		idx int
		rec any
	}
	pairs := make([]pair, 0, len(e.Interceptions))
	if e.SequenceStrict {
		want := make([]string, len(e.Interceptions))
		for i, x := range e.Interceptions {
			want[i] = x.InterceptionPoint
		}
		if !slices.Equal(want, recPoints) {
			a.failf("interception sequence mismatch: expected %s, recorded %s", fmtList(want), fmtList(recPoints))
			return
		}
		// Pairing is by raw recording index, like the oracle's zip.
		for i := range e.Interceptions {
			if i < len(recorded) {
				pairs = append(pairs, pair{i, recorded[i]})
			}
		}
	} else {
		cursor := 0
		for i, x := range e.Interceptions {
			from := cursor
			for cursor < len(recorded) {
				if p, ok := pointOf(recorded[cursor]); ok && p == x.InterceptionPoint {
					break
				}
				cursor++
			}
			if cursor >= len(recorded) {
				a.failf("interceptions[%d]: interception point %q not found in the recording from position %d on (recorded %s)",
					i, x.InterceptionPoint, from, fmtList(recPoints))
				return
			}
			pairs = append(pairs, pair{i, recorded[cursor]})
			cursor++
		}
	}
	for _, p := range pairs {
		x := e.Interceptions[p.idx]
		label := fmt.Sprintf("interceptions[%d] %s", p.idx, x.InterceptionPoint)
		if x.ContextMustValidate {
			for _, f := range envelopeFailures(p.rec) {
				a.failf("%s: %s", label, f)
			}
		}
		for _, path := range sortedKeys(x.Context) {
			want := x.Context[path]
			got, ok := Lookup(p.rec, path)
			switch {
			case !ok:
				a.failf("%s: context path %q did not resolve (want %s)", label, path, compact(want))
			case !JSONEqual(got, want):
				a.failf("%s: context %s = %s, want %s", label, path, compact(got), compact(want))
			}
		}
		if len(x.ContextMustContain) > 0 || len(x.ContextMustNotContain) > 0 {
			serialized, err := compactJSON(p.rec)
			if err != nil {
				a.failf("%s: cannot serialize the recorded context: %v", label, err)
				continue
			}
			for _, n := range x.ContextMustContain {
				if !strings.Contains(serialized, n) {
					a.failf("%s: context does not contain %q in any form", label, n)
				}
			}
			for _, n := range x.ContextMustNotContain {
				if strings.Contains(serialized, n) {
					a.failf("%s: context contains %q, which must not surface here", label, n)
				}
			}
		}
	}
	for _, name := range e.InterceptionsAbsent {
		if n := countOf(recPoints, name); n > 0 {
			a.failf("interceptions_absent: %q was recorded %d time(s) but must be absent", name, n)
		}
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// runLevel checks the run outcome, final_output, tool_invocations and
// tool_not_invoked (CTK.md §5.4, §5.5).
func (a *asserter) runLevel(e *Expect, rr *RunRecord) {
	if want := a.expectedOutcome(e, rr); rr.Outcome != want {
		a.failf("run_outcome = %q, want %q", rr.Outcome, want)
	}
	if e.HasFinalOutput {
		got := a.tree("final_output", rr.FinalOutput)
		if !JSONEqual(got, e.FinalOutput) {
			a.failf("final_output = %s, want %s", compact(got), compact(e.FinalOutput))
		}
	}
	if e.HasToolInvocations {
		got := make([]any, len(rr.ToolInvocations))
		for i, inv := range rr.ToolInvocations {
			got[i] = map[string]any{"name": inv.Name, "args": a.tree(fmt.Sprintf("tool_invocations[%d].args", i), inv.Args)}
		}
		if !JSONEqual(got, e.ToolInvocations) {
			a.failf("tool_invocations = %s, want %s", compact(got), compact(e.ToolInvocations))
		}
	}
	for _, name := range e.ToolNotInvoked {
		n := 0
		for _, inv := range rr.ToolInvocations {
			if inv.Name == name {
				n++
			}
		}
		if n > 0 {
			a.failf("tool_not_invoked: %q was invoked %d time(s)", name, n)
		}
	}
}

// postureDefault is the spec-default value of each known posture.
func postureDefault(posture string) (string, bool) {
	if posture == PostureToolSeamHostError {
		return PostureContinue, true
	}
	return "", false
}

// expectedOutcome resolves run_outcome_by_posture against the declared
// postures, with the oracle's integrity checks and fallbacks.
func (a *asserter) expectedOutcome(e *Expect, rr *RunRecord) string {
	base := e.RunOutcome
	by := e.RunOutcomeByPosture
	if by == nil {
		return base
	}
	def, known := postureDefault(by.Posture)
	if !known {
		a.failf("run_outcome_by_posture names unknown posture %q; falling back to run_outcome %q", by.Posture, base)
		return base
	}
	if got, ok := by.Outcomes[def]; !ok || got != base {
		a.failf("vector error: run_outcome_by_posture.outcomes.%s = %q must equal run_outcome %q", def, got, base)
	}
	declared := def
	if d, ok := rr.Postures[by.Posture]; ok {
		declared = d
	}
	want, ok := by.Outcomes[declared]
	if !ok {
		a.failf("declared posture %s=%q has no entry in run_outcome_by_posture.outcomes; falling back to run_outcome %q", by.Posture, declared, base)
		return base
	}
	return want
}

// records runs the expect.records forward scan (CTK.md §5.6).
func (a *asserter) records(e *Expect, records []any) {
	if !e.HasRecords {
		return
	}
	if len(records) == 0 {
		a.failf("records: expected %d record assertion(s) but the harness reported no records", len(e.Records))
		return
	}
	cursor := 0
	for i, x := range e.Records {
		for cursor < len(records) {
			if p, ok := pointOf(records[cursor]); ok && p == x.InterceptionPoint {
				break
			}
			cursor++
		}
		if cursor >= len(records) {
			a.failf("records[%d]: no %q record found in order (remaining record assertions skipped)", i, x.InterceptionPoint)
			return
		}
		rec := records[cursor]
		label := fmt.Sprintf("records[%d] (record #%d, %s)", i, cursor, x.InterceptionPoint)
		for _, path := range sortedKeys(x.Assert) {
			want := x.Assert[path]
			got, ok := Lookup(rec, path)
			switch {
			case !ok:
				a.failf("%s: %s did not resolve (want %s)", label, path, compact(want))
			case !JSONEqual(got, want):
				a.failf("%s: %s = %s, want %s", label, path, compact(got), compact(want))
			}
		}
		for _, path := range x.Absent {
			if got, ok := Lookup(rec, path); ok {
				a.failf("%s: %s is present (%s), want absent", label, path, compact(got))
			}
		}
		for _, path := range x.Present {
			if _, ok := Lookup(rec, path); !ok {
				a.failf("%s: %s is absent, want present", label, path)
			}
		}
		cursor++
	}
}

// sequence checks that the recorded contexts' integer sequences are
// strictly increasing and that every context has one; gaps are fine
// (CTK.md §5.3). It runs whatever sequence_strict says.
func (a *asserter) sequence(recorded []any) {
	var seqs []int64
	var shown []string
	for _, c := range recorded {
		raw, ok := Lookup(c, "sequence")
		if !ok {
			shown = append(shown, "<missing>")
			continue
		}
		n, isInt := int64Of(raw)
		if !isInt {
			shown = append(shown, compact(raw))
			continue
		}
		seqs = append(seqs, n)
		shown = append(shown, strconv.FormatInt(n, 10))
	}
	if len(seqs) != len(recorded) {
		a.failf("sequence: %d of %d recorded contexts lack an integer sequence: [%s]",
			len(recorded)-len(seqs), len(recorded), strings.Join(shown, " "))
		return
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			a.failf("sequence not strictly increasing at recorded context %d: [%s]", i, strings.Join(shown, " "))
			return
		}
	}
}

// int64Of reports v as an int64 when it is an integer-typed JSON number
// within the i64 range (the oracle's as_i64).
func int64Of(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	k, ok := classifyNumber(string(n))
	if !ok {
		return 0, false
	}
	switch k.kind {
	case kindNegInt:
		return k.i, true
	case kindPosInt:
		if k.u <= math.MaxInt64 {
			return int64(k.u), true
		}
	}
	return 0, false
}

// identities checks identities_equal (CTK.md §5.5).
func (a *asserter) identities(e *Expect, rr *RunRecord) {
	if e.IdentitiesEqual == nil {
		return
	}
	if len(rr.Identities) == 0 {
		a.failf("identities_equal is expected but the harness reported no identity pairs")
		return
	}
	var differ []int
	for i, p := range rr.Identities {
		if !sameIdentity(p.Input, p.Enforced) {
			differ = append(differ, i)
		}
	}
	switch {
	case *e.IdentitiesEqual && len(differ) > 0:
		parts := make([]string, len(differ))
		for j, i := range differ {
			p := rr.Identities[i]
			parts[j] = fmt.Sprintf("#%d input=%s enforced=%s", i, fmtIdentity(p.Input), fmtIdentity(p.Enforced))
		}
		a.failf("identities_equal: want input == enforced at every emission, but they differ at %s", strings.Join(parts, "; "))
	case !*e.IdentitiesEqual && len(differ) == 0:
		a.failf("identities_equal: want input != enforced at some emission, but all %d pairs are equal", len(rr.Identities))
	}
}

func sameIdentity(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func fmtIdentity(s *string) string {
	if s == nil {
		return "null"
	}
	return strconv.Quote(*s)
}

// incremental checks released_output and persisted_must_not_contain
// (CTK.md §2.5, HARNESS.md "Incremental mediation").
func (a *asserter) incremental(e *Expect, rr *RunRecord) {
	if e.HasReleasedOutput {
		got := a.tree("released_output", rr.ReleasedOutput)
		if !JSONEqual(got, e.ReleasedOutput) {
			a.failf("released_output = %s, want %s", compact(got), compact(e.ReleasedOutput))
		}
	}
	for _, n := range e.PersistedMustNotContain {
		if strings.Contains(rr.Persisted, n) {
			a.failf("persisted contains %q, which must never become durable", n)
		}
	}
}

// ---- envelope check (CTK.md §2.3) ------------------------------------

// coreFields are the seven required-core context members.
func coreFields() []string {
	return []string{"spec", "interception_point", "timestamp", "sequence", "agent", "session", "target"}
}

// condField is a conditional context member; subs lists the subfields it
// must carry, nil when the member only has to be present.
type condField struct {
	key  string
	subs []string
}

// conditionalFields lists the conditional members of each point.
func conditionalFields(point string) []condField {
	switch point {
	case "agent_startup":
		return []condField{{"agent_init", []string{"tools_registered"}}}
	case "input":
		return []condField{{"input", []string{"content", "role"}}}
	case "pre_model_call":
		return []condField{{"model", []string{"id"}}, {"messages", nil}}
	case "post_model_call":
		return []condField{{"model", []string{"id"}}, {"response", []string{"content", "tool_calls", "finish_reason"}}}
	case "pre_tool_call":
		return []condField{{"tool_call", []string{"id", "name", "args"}}}
	case "post_tool_call":
		return []condField{{"tool_call", []string{"id", "name", "args"}}, {"tool_result", []string{"value", "is_error"}}}
	case "output":
		return []condField{{"output", []string{"content"}}}
	case "agent_shutdown":
		return []condField{{"summary", []string{"reason"}}}
	}
	return nil
}

// envelopeFailures reports each missing core member, then the first
// envelope violation, the way the oracle's recorded-context check does.
func envelopeFailures(ctx any) []string {
	m, ok := ctx.(map[string]any)
	if !ok {
		return []string{"recorded context is not an object"}
	}
	var out []string
	for _, k := range coreFields() {
		if _, ok := m[k]; !ok {
			out = append(out, fmt.Sprintf("recorded context lacks required member %q", k))
		}
	}
	if err := envelopeError(m); err != "" {
		out = append(out, "recorded context fails the envelope check: "+err)
	}
	return out
}

func envelopeError(m map[string]any) string {
	spec, _ := m["spec"].(string)
	if !validSpecVersion(spec) {
		return "$.spec: missing or not an agent-hooks/<major>.<minor> string"
	}
	point, ok := m["interception_point"].(string)
	if !ok {
		return "$.interception_point: missing or not a string"
	}
	if !slices.Contains(InterceptionPoints(), point) {
		return fmt.Sprintf("$.interception_point: %q is not one of the eight points", point)
	}
	if _, ok := m["timestamp"].(string); !ok {
		return "$.timestamp: missing or not a string"
	}
	if n, ok := int64Of(m["sequence"]); !ok || n < 0 {
		return "$.sequence: missing or not an integer >= 0"
	}
	agent, ok := m["agent"].(map[string]any)
	if !ok {
		return "$.agent: missing or not an object"
	}
	if id, _ := agent["id"].(string); id == "" {
		return "$.agent.id: missing or not a non-empty string"
	}
	if fw, _ := agent["framework"].(string); !validFramework(fw) {
		return "$.agent.framework: missing or not a ^[a-z0-9_-]+$ string"
	}
	session, _ := m["session"].(map[string]any)
	if id, _ := session["id"].(string); id == "" {
		return "$.session.id: missing or not a non-empty string"
	}
	if _, ok := m["target"]; !ok {
		return "$.target: missing"
	}
	for _, cf := range conditionalFields(point) {
		v, ok := m[cf.key]
		if !ok {
			return fmt.Sprintf("$.%s: missing at %s", cf.key, point)
		}
		if cf.subs == nil {
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("$.%s: not an object", cf.key)
		}
		for _, s := range cf.subs {
			if _, ok := obj[s]; !ok {
				return fmt.Sprintf("$.%s.%s: missing", cf.key, s)
			}
		}
	}
	return ""
}

func validSpecVersion(s string) bool {
	ver, ok := strings.CutPrefix(s, "agent-hooks/")
	if !ok {
		return false
	}
	major, minor, ok := strings.Cut(ver, ".")
	return ok && allDigits(major) && allDigits(minor)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func validFramework(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ---- JSON value equality (CTK.md §5.2) -------------------------------

// JSONEqual reports whether a and b are equal JSON values under the CTK's
// rules: objects by key set and member values, arrays element-wise,
// strings and bools exactly, null only to null, and numbers only when of
// the same kind (non-negative integer, negative integer, float) and value.
// So 1 != 1.0, 1.0 == 1.00, -0 (a float) != 0, and integer tokens beyond
// the 64-bit ranges compare as doubles.
//
// Values that are not value-tree nodes (float64, int, structs, typed maps
// and slices) are compared as their encoding/json encoding: float64(200)
// encodes as 200 and so is an integer. A value that cannot be encoded,
// or a json.Number that is not a valid JSON number, equals nothing.
func JSONEqual(a, b any) bool {
	a, okA := asTreeNode(a)
	b, okB := asTreeNode(b)
	if !okA || !okB {
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numbersEqual(x, y)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !JSONEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !JSONEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// asTreeNode returns v as a value-tree node, converting other Go values
// through encoding/json; nil maps and slices are JSON null.
func asTreeNode(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return nil, true
		}
		return x, true
	case []any:
		if x == nil {
			return nil, true
		}
		return x, true
	}
	if isTreeNode(v) {
		return v, true
	}
	t, err := toTree(v)
	return t, err == nil
}

type numberKind int

const (
	kindPosInt numberKind = iota // integer token in [0, 2^64)
	kindNegInt                   // integer token in [-2^63, 0)
	kindFloat                    // fraction/exponent, -0, or an integer beyond 64 bits
)

type number struct {
	kind numberKind
	u    uint64
	i    int64
	f    float64
}

func numbersEqual(a, b json.Number) bool {
	x, okX := classifyNumber(string(a))
	y, okY := classifyNumber(string(b))
	if !okX || !okY || x.kind != y.kind {
		return false
	}
	switch x.kind {
	case kindPosInt:
		return x.u == y.u
	case kindNegInt:
		return x.i == y.i
	default:
		return x.f == y.f // IEEE: -0 == 0.0
	}
}

// classifyNumber sorts a JSON number token into serde_json's three kinds.
func classifyNumber(tok string) (number, bool) {
	if !validNumberToken(tok) {
		return number{}, false
	}
	if strings.ContainsAny(tok, ".eE") {
		return floatNumber(tok), true
	}
	if tok[0] == '-' {
		// "-0" has no negative-integer representation; serde makes it -0.0.
		if i, err := strconv.ParseInt(tok, 10, 64); err == nil && i != 0 {
			return number{kind: kindNegInt, i: i}, true
		}
		return floatNumber(tok), true
	}
	if u, err := strconv.ParseUint(tok, 10, 64); err == nil {
		return number{kind: kindPosInt, u: u}, true
	}
	return floatNumber(tok), true
}

func floatNumber(tok string) number {
	// A range error still yields ±Inf or ±0, which is the nearest double.
	f, _ := strconv.ParseFloat(tok, 64)
	return number{kind: kindFloat, f: f}
}

// validNumberToken checks the JSON number grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumberToken(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// ---- serialization helpers -------------------------------------------

// compactJSON serializes v compactly with sorted object keys and no HTML
// escaping, the text the substring assertions scan.
func compactJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// compact renders v for a failure message.
func compact(v any) string {
	s, err := compactJSON(v)
	if err != nil {
		return fmt.Sprintf("<unencodable %T: %v>", v, err)
	}
	return s
}

func fmtList(ss []string) string {
	if len(ss) == 0 {
		return "[]"
	}
	return "[" + strings.Join(ss, " ") + "]"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
