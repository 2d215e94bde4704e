package records

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// MaxLineBytes bounds one line of a trail; a longer line is reported as
// not a record and skipped.
const MaxLineBytes = 16 << 20

// Severity grades a Finding.
type Severity int

// Severities. A warning describes something a healthy trail can show (a
// session cut by rotation, a session still open); an error is damage: a
// gap, a duplicate, a record after agent_shutdown, a line that is not a
// record.
const (
	SeverityWarning Severity = iota
	SeverityError
)

// String returns "warning" or "error".
func (s Severity) String() string {
	if s == SeverityError {
		return "error"
	}
	return "warning"
}

// Finding is one problem or warning, located at a line of a trail file.
type Finding struct {
	File     string
	Line     int
	Severity Severity
	// SessionID is the session concerned; "" for a line that is not a
	// record.
	SessionID string
	Msg       string

	file int // position of File in reading order
}

// String renders the finding as "file:line: severity: session "id": msg".
func (f Finding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s: ", f.File, f.Line, f.Severity)
	if f.SessionID != "" {
		fmt.Fprintf(&b, "session %q: ", f.SessionID)
	}
	b.WriteString(f.Msg)
	return b.String()
}

// Report is the outcome of verifying a trail.
type Report struct {
	Files    int
	Records  int
	Sessions int
	// Policies counts the records per policy version, in the order the
	// versions first appear: from policy marker lines, or from the
	// envelopes. Records before any marker count under Version "". Empty
	// when the trail names no policy.
	Policies []PolicyRecords
	// Findings are ordered by file, then line.
	Findings []Finding
}

// PolicyRecords is how many records of a trail a policy version produced.
type PolicyRecords struct {
	Version string
	Records int
}

// PolicyLines describes Policies, one line per version.
func (r *Report) PolicyLines() []string {
	out := make([]string, len(r.Policies))
	for i, p := range r.Policies {
		name := "policy " + p.Version
		if p.Version == "" {
			name = "before any policy marker"
		}
		out[i] = fmt.Sprintf("%s: %s", name, plural(p.Records, "record"))
	}
	return out
}

// Errors counts the findings of severity SeverityError.
func (r *Report) Errors() int { return r.count(SeverityError) }

// Warnings counts the findings of severity SeverityWarning.
func (r *Report) Warnings() int { return r.count(SeverityWarning) }

func (r *Report) count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Summary is one line: files, records, sessions, errors and warnings.
func (r *Report) Summary() string {
	return fmt.Sprintf("%s, %s in %s: %s, %s",
		plural(r.Files, "file"), plural(r.Records, "record"), plural(r.Sessions, "session"),
		plural(r.Errors(), "problem"), plural(r.Warnings(), "warning"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Verifier checks interception-record trails: JSONL files, one record per
// line, read in the order they were written. Per session_id, sequence
// numbers must be unique and gapless from the lowest one seen; they may
// arrive in any order (emissions of one session that run at once are
// written as each finishes). It reports, as errors, gaps (sequences never
// seen), duplicates, records numbered after the session's agent_shutdown,
// and lines that are not records; as warnings, sessions whose
// lowest sequence is not an agent_startup at 0 or that never reach
// agent_shutdown (rotation can cut a trail at either end, and a live
// gateway has sessions in progress), and records with sequence -1 (host
// failures whose sequence was unknown: reported, never counted as gaps).
//
// Feed files with Read in writing order, then call Report. A Verifier
// keeps a few words per session, not the records.
type Verifier struct {
	files   []string
	records int
	// policy is the version the last marker named; perPolicy counts the
	// records of each version, first seen first in policies.
	policy    string
	named     bool // a marker or an envelope was seen
	perPolicy map[string]int
	policies  []string
	sessions  map[string]*session
	order     []string // session ids, first seen first
	findings  []Finding
}

// session is what the verifier keeps about one session_id.
type session struct {
	first, last loc
	numbered    bool  // a record with a known sequence was seen
	lo, hi      int64 // lowest and highest sequence seen
	loPoint     enforcement.Point
	missing     []gap // sorted, disjoint ranges in (lo, hi) not yet seen
	shutdown    bool
	// sealed is set, with shutdownSeq, by a numbered agent_shutdown:
	// nothing may be numbered after it (spec §3.1(2)).
	sealed      bool
	shutdownSeq int64
}

// loc is a position in the trail.
type loc struct {
	file, line int
}

// gap is a range of sequences not (yet) seen, and where it opened.
type gap struct {
	from, to int64
	at       loc
	msg      string
}

// NewVerifier returns an empty Verifier.
func NewVerifier() *Verifier {
	return &Verifier{sessions: make(map[string]*session), perPolicy: make(map[string]int)}
}

// Read checks the lines of one file, named name in findings. Sessions
// continue across files. The error is a read error; what the lines hold
// is reported as findings.
func (v *Verifier) Read(name string, r io.Reader) error {
	v.files = append(v.files, name)
	file := len(v.files) - 1
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		tooLong := len(buf)+len(chunk) > MaxLineBytes
		if !tooLong {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if tooLong {
				if err := skipLine(br); err != nil && !errors.Is(err, io.EOF) {
					return fmt.Errorf("records: read %s: %w", name, err)
				}
				n++
				v.add(loc{file, n}, SeverityError, "", fmt.Sprintf("not an interception record: line longer than %d bytes", MaxLineBytes))
				buf = buf[:0]
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("records: read %s: %w", name, err)
		}
		if len(buf) > 0 || tooLong {
			n++
			if tooLong {
				v.add(loc{file, n}, SeverityError, "", fmt.Sprintf("not an interception record: line longer than %d bytes", MaxLineBytes))
			} else {
				v.line(loc{file, n}, bytes.TrimSuffix(buf, []byte("\n")))
			}
			buf = buf[:0]
		}
		if err != nil { // io.EOF
			return nil
		}
	}
}

// skipLine discards the rest of the current line.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// header holds the members a line must have to count as a record; Record's
// own decoding defaults a missing sequence to 0, which must not pass.
type header struct {
	InterceptionPoint *string `json:"interception_point"`
	SessionID         *string `json:"session_id"`
	Sequence          *int64  `json:"sequence"`
}

// line checks one line (without its newline).
func (v *Verifier) line(at loc, text []byte) {
	if len(bytes.TrimSpace(text)) == 0 {
		v.add(at, SeverityError, "", "not an interception record: empty line")
		return
	}
	var frame struct {
		Marker   *Marker         `json:"hooks_gateway_policy"`
		Record   json.RawMessage `json:"record"`
		Envelope *Attribution    `json:"hooks_gateway"`
	}
	policy := v.policy
	if json.Unmarshal(text, &frame) == nil {
		switch {
		case frame.Marker != nil:
			if frame.Marker.Version == "" {
				v.add(at, SeverityError, "", "policy marker without a version")
				return
			}
			v.policy, v.named = frame.Marker.Version, true
			return
		case frame.Record != nil && frame.Envelope != nil:
			text, policy, v.named = frame.Record, frame.Envelope.PolicyVersion, true
		}
	}
	var h header
	var rec enforcement.Record
	if err := json.Unmarshal(text, &h); err != nil {
		v.add(at, SeverityError, "", "not an interception record: "+jsonProblem(err))
		return
	}
	switch {
	case h.InterceptionPoint == nil || h.SessionID == nil || h.Sequence == nil:
		v.add(at, SeverityError, "", "not an interception record: interception_point, session_id or sequence missing")
		return
	case *h.SessionID == "":
		v.add(at, SeverityError, "", "not an interception record: empty session_id")
		return
	case !enforcement.Point(*h.InterceptionPoint).Valid():
		v.add(at, SeverityError, *h.SessionID, fmt.Sprintf("not an interception record: unknown interception_point %q", *h.InterceptionPoint))
		return
	}
	if err := json.Unmarshal(text, &rec); err != nil {
		v.add(at, SeverityError, *h.SessionID, "not an interception record: "+jsonProblem(err))
		return
	}
	v.records++
	if _, seen := v.perPolicy[policy]; !seen {
		v.policies = append(v.policies, policy)
	}
	v.perPolicy[policy]++
	v.record(at, &rec)
}

// jsonProblem describes a decoding error without quoting the line (a
// type error names the JSON kind, and for a number its value, never a
// string's content).
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te) && te.Field == "":
		return "not a JSON object"
	case errors.As(err, &te):
		return fmt.Sprintf("%s: unexpected JSON %s", te.Field, te.Value)
	}
	return strings.TrimPrefix(err.Error(), "interception record: ")
}

// record checks one record against its session's history.
func (v *Verifier) record(at loc, r *enforcement.Record) {
	s := v.sessions[r.SessionID]
	if s == nil {
		s = &session{first: at}
		v.sessions[r.SessionID] = s
		v.order = append(v.order, r.SessionID)
	}
	s.last = at
	seq := r.Sequence
	if s.sealed && seq > s.shutdownSeq {
		v.add(at, SeverityError, r.SessionID, fmt.Sprintf("%s at sequence %d follows the session's agent_shutdown (sequence %d)", r.InterceptionPoint, seq, s.shutdownSeq))
	}
	if r.InterceptionPoint == enforcement.AgentShutdown {
		s.shutdown = true
		if seq >= 0 && !s.sealed {
			s.sealed, s.shutdownSeq = true, seq
		}
	}
	switch {
	case seq == -1:
		v.add(at, SeverityWarning, r.SessionID, fmt.Sprintf("host failure at %s with unknown sequence (-1); not counted as a gap", r.InterceptionPoint))
		return
	case seq < 0:
		v.add(at, SeverityError, r.SessionID, fmt.Sprintf("invalid sequence %d", seq))
		return
	case !s.numbered:
		s.numbered = true
		s.lo, s.hi, s.loPoint = seq, seq, r.InterceptionPoint
		return
	}
	switch {
	case seq == s.hi+1:
		s.hi = seq
	case seq > s.hi+1:
		s.missing = append(s.missing, gap{from: s.hi + 1, to: seq - 1, at: at,
			msg: fmt.Sprintf("sequence jumps from %d to %d", s.hi, seq)})
		s.hi = seq
	case seq < s.lo:
		if seq+1 <= s.lo-1 {
			s.missing = slices.Insert(s.missing, 0, gap{from: seq + 1, to: s.lo - 1, at: at,
				msg: fmt.Sprintf("sequence %d arrived before %d", s.lo, seq)})
		}
		s.lo, s.loPoint = seq, r.InterceptionPoint
	case s.fill(seq):
		// A record arriving late fills its gap: emissions of one session
		// that run at once (concurrent requests, replicas) are written
		// when each finishes, not in sequence order.
	default:
		v.add(at, SeverityError, r.SessionID, fmt.Sprintf("duplicate sequence %d", seq))
	}
}

// fill removes seq from the missing ranges, reporting whether it was
// missing.
func (s *session) fill(seq int64) bool {
	i, found := slices.BinarySearchFunc(s.missing, seq, func(g gap, seq int64) int {
		switch {
		case g.to < seq:
			return -1
		case g.from > seq:
			return 1
		}
		return 0
	})
	if !found {
		return false
	}
	g := s.missing[i]
	switch {
	case g.from == seq && g.to == seq:
		s.missing = slices.Delete(s.missing, i, i+1)
	case g.from == seq:
		s.missing[i].from++
	case g.to == seq:
		s.missing[i].to--
	default:
		right := g
		right.from = seq + 1
		s.missing[i].to = seq - 1
		s.missing = slices.Insert(s.missing, i+1, right)
	}
	return true
}

func (v *Verifier) add(at loc, sev Severity, sessionID, msg string) {
	v.findings = append(v.findings, Finding{
		File: v.files[at.file], Line: at.line, Severity: sev, SessionID: sessionID, Msg: msg, file: at.file,
	})
}

// Report ends the verification: it adds the findings only the whole trail
// reveals (gaps never filled, session starts and ends) and returns the
// report. Call it once, after the last Read.
func (v *Verifier) Report() *Report {
	for _, id := range v.order {
		s := v.sessions[id]
		for _, g := range s.missing {
			what := fmt.Sprintf("sequence %d missing", g.from)
			if g.to > g.from {
				what = fmt.Sprintf("sequences %d-%d missing", g.from, g.to)
			}
			v.add(g.at, SeverityError, id, fmt.Sprintf("gap: %s (%s)", what, g.msg))
		}
		switch {
		case !s.numbered:
			v.add(s.first, SeverityWarning, id, "no record with a known sequence")
		case s.lo != 0 || s.loPoint != enforcement.AgentStartup:
			v.add(s.first, SeverityWarning, id, fmt.Sprintf("does not start with agent_startup at sequence 0 (lowest is %s at %d); the trail may have been cut by rotation", s.loPoint, s.lo))
		}
		if !s.shutdown {
			msg := "never reaches agent_shutdown; the session may still be open, or the trail cut"
			if s.numbered {
				msg = fmt.Sprintf("never reaches agent_shutdown (highest sequence %d); the session may still be open, or the trail cut", s.hi)
			}
			v.add(s.last, SeverityWarning, id, msg)
		}
	}
	slices.SortStableFunc(v.findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.Line, b.Line))
	})
	rep := &Report{Files: len(v.files), Records: v.records, Sessions: len(v.sessions), Findings: v.findings}
	if v.named {
		for _, p := range v.policies {
			rep.Policies = append(rep.Policies, PolicyRecords{Version: p, Records: v.perPolicy[p]})
		}
	}
	return rep
}

// rotatedName matches a rotated file: the live file's name and ".N".
var rotatedName = regexp.MustCompile(`^(.+)\.([1-9][0-9]*)$`)

// TrailOrder puts rotated files in writing order, oldest first:
// records.jsonl.N … records.jsonl.1, then records.jsonl, whatever their
// order in paths (a shell glob sorts records.jsonl.10 before .2). Groups
// of files sharing a live name keep the position of their first member;
// other files keep their order.
func TrailOrder(paths []string) []string {
	type entry struct {
		path  string
		group int // index of the group's first member
		n     int // rotation number; 0 for the live file
	}
	groups := make(map[string]int)
	entries := make([]entry, 0, len(paths))
	for i, p := range paths {
		base, n := filepath.Clean(p), 0
		if m := rotatedName.FindStringSubmatch(base); m != nil {
			if k, err := strconv.Atoi(m[2]); err == nil {
				base, n = m[1], k
			}
		}
		g, ok := groups[base]
		if !ok {
			g = i
			groups[base] = g
		}
		entries = append(entries, entry{path: p, group: g, n: n})
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		if a.group != b.group {
			return cmp.Compare(a.group, b.group)
		}
		// Higher rotation numbers are older; the live file (0) is newest.
		ka, kb := a.n, b.n
		if ka == 0 {
			ka = -1
		}
		if kb == 0 {
			kb = -1
		}
		return cmp.Compare(kb, ka)
	})
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.path
	}
	return out
}

// VerifyFiles verifies the trail made of the files at paths, put in
// writing order by TrailOrder. The error is an I/O error; the trail's
// problems are in the report.
func VerifyFiles(paths []string) (*Report, error) {
	v := NewVerifier()
	for _, p := range TrailOrder(paths) {
		if err := verifyFile(v, p); err != nil {
			return nil, err
		}
	}
	return v.Report(), nil
}

func verifyFile(v *Verifier, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	defer f.Close()
	return v.Read(path, f)
}
