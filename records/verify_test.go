package records

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// trailLine is one line of a test trail: a record, or raw text.
type trailLine struct {
	session string
	seq     int64
	point   enforcement.Point
	raw     string
}

func rec(session string, seq int64, point enforcement.Point) trailLine {
	return trailLine{session: session, seq: seq, point: point}
}

func raw(text string) trailLine { return trailLine{raw: text} }

// session returns a complete session's lines: startup, n middle records,
// shutdown.
func fullSession(id string, n int) []trailLine {
	out := []trailLine{rec(id, 0, enforcement.AgentStartup)}
	for i := 1; i <= n; i++ {
		out = append(out, rec(id, int64(i), enforcement.PreModelCall))
	}
	return append(out, rec(id, int64(n+1), enforcement.AgentShutdown))
}

func render(t *testing.T, lines []trailLine) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		if l.raw != "" || l.session == "" {
			b.WriteString(l.raw)
		} else {
			js, err := sessionRecord(l.session, l.seq, l.point).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			b.Write(js)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func verify(t *testing.T, files ...[]trailLine) *Report {
	t.Helper()
	v := NewVerifier()
	for i, f := range files {
		name := "t.jsonl"
		if len(files) > 1 {
			name = "t" + string(rune('a'+i)) + ".jsonl"
		}
		if err := v.Read(name, strings.NewReader(render(t, f))); err != nil {
			t.Fatal(err)
		}
	}
	return v.Report()
}

func findings(r *Report) []string {
	out := make([]string, len(r.Findings))
	for i, f := range r.Findings {
		out[i] = f.String()
	}
	return out
}

func TestVerify(t *testing.T) {
	const (
		start = enforcement.AgentStartup
		mid   = enforcement.PreModelCall
		stop  = enforcement.AgentShutdown
	)
	tests := []struct {
		name  string
		lines []trailLine
		want  []string
	}{
		{"clean", fullSession("s1", 3), nil},
		{"gap", []trailLine{rec("s1", 0, start), rec("s1", 1, mid), rec("s1", 4, mid), rec("s1", 5, stop)}, []string{
			`t.jsonl:3: error: session "s1": gap: sequences 2-3 missing (sequence jumps from 1 to 4)`,
		}},
		{"single gap", []trailLine{rec("s1", 0, start), rec("s1", 2, stop)}, []string{
			`t.jsonl:2: error: session "s1": gap: sequence 1 missing (sequence jumps from 0 to 2)`,
		}},
		{"duplicate", []trailLine{rec("s1", 0, start), rec("s1", 1, mid), rec("s1", 1, mid), rec("s1", 2, stop)}, []string{
			`t.jsonl:3: error: session "s1": duplicate sequence 1`,
		}},
		{"reordering fills the gap late", []trailLine{rec("s1", 0, start), rec("s1", 2, mid), rec("s1", 1, mid), rec("s1", 3, stop)}, nil},
		{"reordering partly fills a gap", []trailLine{rec("s1", 0, start), rec("s1", 5, mid), rec("s1", 3, mid), rec("s1", 6, stop)}, []string{
			`t.jsonl:2: error: session "s1": gap: sequences 1-2 missing (sequence jumps from 0 to 5)`,
			`t.jsonl:2: error: session "s1": gap: sequence 4 missing (sequence jumps from 0 to 5)`,
		}},
		{"reordering before the first record", []trailLine{rec("s1", 2, mid), rec("s1", 0, start), rec("s1", 1, mid), rec("s1", 3, stop)}, nil},
		{"garbage lines", append(fullSession("s1", 1),
			raw("not json"), raw(""), raw(`{"interception_point":"input","session_id":"s1"}`),
			raw(`{"interception_point":"input","session_id":"s1","sequence":3}`),
			raw(`{"interception_point":"nowhere","session_id":"s1","sequence":3,"verdict":{"decision":"allow"}}`),
			raw(`{"interception_point":"input","session_id":"","sequence":3,"verdict":{"decision":"allow"}}`),
			raw(`[1,2]`), raw(`{"interception_point":"input","session_id":"s1","sequence":1.5,"verdict":{"decision":"allow"}}`),
			raw(`{"interception_point":"input","session_id":"s1","sequence":2,"verdict":{"decision":"allow"},"verdicts":"secret text"}`)), []string{
			`t.jsonl:4: error: not an interception record: invalid JSON at byte 2`,
			`t.jsonl:5: error: not an interception record: empty line`,
			`t.jsonl:6: error: not an interception record: interception_point, session_id or sequence missing`,
			`t.jsonl:7: error: session "s1": not an interception record: missing verdict`,
			`t.jsonl:8: error: session "s1": not an interception record: unknown interception_point "nowhere"`,
			`t.jsonl:9: error: not an interception record: empty session_id`,
			`t.jsonl:10: error: not an interception record: not a JSON object`,
			`t.jsonl:11: error: not an interception record: sequence: unexpected JSON number 1.5`,
			`t.jsonl:12: error: session "s1": not an interception record: verdicts: unexpected JSON string`,
		}},
		{"unknown sequence is reported, not a gap", []trailLine{rec("s1", 0, start), rec("s1", -1, mid), rec("s1", 1, mid), rec("s1", 2, stop)}, []string{
			`t.jsonl:2: warning: session "s1": host failure at pre_model_call with unknown sequence (-1); not counted as a gap`,
		}},
		{"records after agent_shutdown", []trailLine{rec("s1", 0, start), rec("s1", 1, mid), rec("s1", 2, stop), rec("s1", 3, enforcement.PostModelCall), rec("s1", -1, mid)}, []string{
			`t.jsonl:4: error: session "s1": post_model_call at sequence 3 follows the session's agent_shutdown (sequence 2)`,
			`t.jsonl:5: warning: session "s1": host failure at pre_model_call with unknown sequence (-1); not counted as a gap`,
		}},
		{"negative sequence", []trailLine{rec("s1", 0, start), rec("s1", -7, mid), rec("s1", 1, stop)}, []string{
			`t.jsonl:2: error: session "s1": invalid sequence -7`,
		}},
		{"cut at both ends", []trailLine{rec("s1", 7, mid), rec("s1", 8, mid)}, []string{
			`t.jsonl:1: warning: session "s1": does not start with agent_startup at sequence 0 (lowest is pre_model_call at 7); the trail may have been cut by rotation`,
			`t.jsonl:2: warning: session "s1": never reaches agent_shutdown (highest sequence 8); the session may still be open, or the trail cut`,
		}},
		{"sequence 0 is not agent_startup", []trailLine{rec("s1", 0, mid), rec("s1", 1, stop)}, []string{
			`t.jsonl:1: warning: session "s1": does not start with agent_startup at sequence 0 (lowest is pre_model_call at 0); the trail may have been cut by rotation`,
		}},
		{"interleaved sessions", []trailLine{
			rec("a", 0, start), rec("b", 0, start), rec("a", 1, mid), rec("c", 0, start), rec("b", 1, mid),
			rec("a", 2, stop), rec("b", 3, stop), rec("c", 1, mid), rec("c", 1, stop),
		}, []string{
			`t.jsonl:7: error: session "b": gap: sequence 2 missing (sequence jumps from 1 to 3)`,
			`t.jsonl:9: error: session "c": duplicate sequence 1`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := findings(verify(t, tt.lines))
			if !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestVerifyCountsAndSessionsSpanFiles(t *testing.T) {
	a := append(fullSession("x", 2)[:3], rec("y", 0, enforcement.AgentStartup))
	b := append([]trailLine{rec("x", 3, enforcement.AgentShutdown), rec("y", 2, enforcement.AgentShutdown)}, raw("junk"))
	r := verify(t, a, b)
	want := []string{
		`tb.jsonl:2: error: session "y": gap: sequence 1 missing (sequence jumps from 0 to 2)`,
		`tb.jsonl:3: error: not an interception record: invalid JSON at byte 1`,
	}
	if got := findings(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if r.Files != 2 || r.Records != 6 || r.Sessions != 2 || r.Errors() != 2 || r.Warnings() != 0 {
		t.Errorf("report = %+v", r)
	}
	if s := r.Summary(); s != "2 files, 6 records in 2 sessions: 2 problems, 0 warnings" {
		t.Errorf("summary = %q", s)
	}
}

func TestVerifyLongLinesAndMissingNewline(t *testing.T) {
	v := NewVerifier()
	long := strings.Repeat("x", MaxLineBytes+10)
	js, _ := sessionRecord("s", 0, enforcement.AgentStartup).MarshalJSON()
	text := long + "\n" + string(js) + "\n" + long + string(js) // the last line is unterminated and too long
	if err := v.Read("t.jsonl", strings.NewReader(text)); err != nil {
		t.Fatal(err)
	}
	r := v.Report()
	want := []string{
		"t.jsonl:1: error: not an interception record: line longer than 16777216 bytes",
		"t.jsonl:3: error: not an interception record: line longer than 16777216 bytes",
		`t.jsonl:2: warning: session "s": never reaches agent_shutdown (highest sequence 0); the session may still be open, or the trail cut`,
	}
	// Sorted by line: the warning (line 2) comes between.
	want = []string{want[0], want[2], want[1]}
	if got := findings(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if r.Records != 1 {
		t.Errorf("records = %d, want 1", r.Records)
	}

	v = NewVerifier()
	if err := v.Read("u.jsonl", strings.NewReader(string(js))); err != nil { // no trailing newline
		t.Fatal(err)
	}
	if r := v.Report(); r.Records != 1 || r.Errors() != 0 {
		t.Errorf("an unterminated last record: %+v", r)
	}
}

func TestTrailOrder(t *testing.T) {
	in := []string{"a/records.jsonl", "other.jsonl", "a/records.jsonl.1", "a/records.jsonl.10", "a/records.jsonl.2", "b.jsonl.3"}
	want := []string{"a/records.jsonl.10", "a/records.jsonl.2", "a/records.jsonl.1", "a/records.jsonl", "other.jsonl", "b.jsonl.3"}
	if got := TrailOrder(in); !reflect.DeepEqual(got, want) {
		t.Errorf("TrailOrder = %v, want %v", got, want)
	}
}

// TestVerifyRotatedFiles writes a trail through a rotating JSONL sink and
// verifies it whole, then without its oldest file.
func TestVerifyRotatedFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "records.jsonl")
	w, err := OpenJSONL(path, JSONLOptions{MaxBytes: 2 << 10, MaxFiles: 100})
	if err != nil {
		t.Fatal(err)
	}
	var lines []trailLine
	for _, id := range []string{"s1", "s2", "s3"} {
		lines = append(lines, fullSession(id, 8)...)
	}
	// Interleave the sessions record by record.
	const per = 10
	for i := range per {
		for s := range 3 {
			l := lines[s*per+i]
			if err := w.WriteRecord(context.Background(), sessionRecord(l.session, l.seq, l.point)); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Close()
	files, _ := filepath.Glob(path + "*")
	if len(files) < 4 {
		t.Fatalf("only %d files: the test needs rotation", len(files))
	}
	r, err := VerifyFiles(files) // glob order: records.jsonl, .1, .10, … TrailOrder fixes it
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 0 || r.Records != 30 || r.Sessions != 3 || r.Files != len(files) {
		t.Fatalf("report = %+v, findings %v", r, findings(r))
	}

	// Without the oldest file the sessions start mid-way: warnings only.
	oldest := TrailOrder(files)[0]
	var rest []string
	for _, f := range files {
		if f != oldest {
			rest = append(rest, f)
		}
	}
	r, err = VerifyFiles(rest)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors() != 0 || r.Warnings() != 3 {
		t.Fatalf("trail cut by rotation: %d errors, %d warnings, want 0 and 3: %v", r.Errors(), r.Warnings(), findings(r))
	}
	for _, f := range r.Findings {
		if !strings.Contains(f.Msg, "does not start with agent_startup") {
			t.Errorf("unexpected finding %s", f)
		}
	}

	if _, err := VerifyFiles([]string{filepath.Join(dir, "absent.jsonl")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
