package records

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// line is a record's bare line, as an unframed sink writes it.
func line(r *enforcement.Record) ([]byte, error) {
	return (&framer{}).frame(nil, r, Attribution{})
}

var marked = Framing{Format: FormatRecord, Markers: true}

func attributed(version, route string) context.Context {
	return WithAttribution(context.Background(), Attribution{PolicyVersion: version, Route: route})
}

// kinds classifies a trail's lines: "m:<version>" for a marker, "r:<session>/<seq>"
// for a bare record (which must carry no extensions), "e:<version>/<route>/<session>"
// for an envelope.
func kinds(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		switch {
		case m[MarkerKey] != nil:
			var mk Marker
			json.Unmarshal(m[MarkerKey], &mk)
			if len(m) != 1 || mk.Timestamp == "" {
				t.Errorf("marker line %s", l)
			}
			out = append(out, "m:"+mk.Version)
		case m["record"] != nil:
			var env Envelope
			var r enforcement.Record
			json.Unmarshal([]byte(l), &env)
			if err := json.Unmarshal(env.Record, &r); err != nil || len(m) != 2 {
				t.Fatalf("envelope %s: %v", l, err)
			}
			out = append(out, "e:"+env.HooksGateway.PolicyVersion+"/"+env.HooksGateway.Route+"/"+r.SessionID)
		default:
			if m["extensions"] != nil {
				t.Errorf("record carries extensions: %s", l)
			}
			var r enforcement.Record
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("record %s: %v", l, err)
			}
			out = append(out, "r:"+r.SessionID)
		}
	}
	return out
}

func wantKinds(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("trail\n got %v\nwant %v", got, want)
	}
}

// A marker comes before the first record of each version, and again for a
// record of an earlier version written after a later one (a request that
// finished on the old policy after a reload); MarkPolicy writes one
// eagerly, once.
func TestWriterPolicyMarkers(t *testing.T) {
	var buf bytes.Buffer
	w := NewFramedWriter(&buf, marked)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.MarkPolicy(ctx, "v1"))
	must(w.MarkPolicy(ctx, "v1"))
	must(w.WriteRecord(attributed("v1", ""), sessionRecord("a", 0, enforcement.AgentStartup)))
	must(w.WriteRecord(attributed("v1", "r"), sessionRecord("a", 1, enforcement.Input)))
	must(w.MarkPolicy(ctx, "v2"))
	must(w.WriteRecord(attributed("v2", ""), sessionRecord("b", 0, enforcement.AgentStartup)))
	must(w.WriteRecord(attributed("v1", ""), sessionRecord("a", 2, enforcement.AgentShutdown)))
	must(w.WriteRecord(attributed("v2", ""), sessionRecord("b", 1, enforcement.Input)))
	must(w.WriteRecord(ctx, sessionRecord("c", 0, enforcement.Input))) // unattributed: no marker
	wantKinds(t, kinds(t, buf.String()), "m:v1", "r:a", "r:a", "m:v2", "r:b", "m:v1", "r:a", "m:v2", "r:b", "r:c")

	rep := NewVerifier()
	if err := rep.Read("stdout", strings.NewReader(buf.String())); err != nil {
		t.Fatal(err)
	}
	got := rep.Report()
	if got.Records != 6 || len(got.Policies) != 2 || got.Policies[0] != (PolicyRecords{"v1", 3}) || got.Policies[1] != (PolicyRecords{"v2", 3}) {
		t.Errorf("verify: %d records, policies %+v", got.Records, got.Policies)
	}
	if l := strings.Join(got.PolicyLines(), "; "); l != "policy v1: 3 records; policy v2: 3 records" {
		t.Errorf("policy lines: %s", l)
	}
	for _, f := range got.Findings {
		if strings.Contains(f.Msg, "not an interception record") {
			t.Errorf("a marker line was read as a bad record: %s", f)
		}
	}
}

func TestEnvelopeFormat(t *testing.T) {
	var buf bytes.Buffer
	w := NewFramedWriter(&buf, Framing{Format: FormatEnvelope, Markers: true})
	if err := w.MarkPolicy(context.Background(), "v1"); err != nil {
		t.Fatal(err)
	}
	w.WriteRecord(attributed("v1", ""), sessionRecord("a", 0, enforcement.AgentStartup))
	w.WriteRecord(attributed("v2", "payments"), sessionRecord("a", 1, enforcement.AgentShutdown))
	wantKinds(t, kinds(t, buf.String()), "e:v1//a", "e:v2/payments/a")
	v := NewVerifier()
	v.Read("t", strings.NewReader(buf.String()))
	rep := v.Report()
	if rep.Records != 2 || rep.Errors() != 0 || rep.Warnings() != 0 || len(rep.Policies) != 2 {
		t.Errorf("verify envelopes: %s %v %+v", rep.Summary(), rep.Findings, rep.Policies)
	}
}

// A rotated file starts with the marker in effect, so each file of a
// trail names its policy.
func TestJSONLRotatedFileStartsWithTheMarker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	one, _ := line(sessionRecord("s", 0, enforcement.Input))
	w, err := OpenJSONL(path, JSONLOptions{MaxBytes: int64(2*len(one) + 100), MaxFiles: 3, Framing: marked})
	if err != nil {
		t.Fatal(err)
	}
	w.MarkPolicy(context.Background(), "v1")
	for i := range 5 {
		if err := w.WriteRecord(attributed("v1", ""), sessionRecord("s", int64(i), enforcement.Input)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	for _, name := range []string{path + ".2", path + ".1", path} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if k := kinds(t, string(b)); k[0] != "m:v1" || len(k) < 2 {
			t.Errorf("%s: %v, want the marker first", filepath.Base(name), k)
		}
	}
	rep, err := VerifyFiles([]string{path, path + ".1", path + ".2"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Records != 5 || len(rep.Policies) != 1 || rep.Policies[0].Records != 5 {
		t.Errorf("verify: %s %+v", rep.Summary(), rep.Policies)
	}
}

// The HTTP sink delivers the marker with the records; it is not counted
// as a delivered record.
func TestHTTPPolicyMarkers(t *testing.T) {
	var mu sync.Mutex
	var got bytes.Buffer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got.ReadFrom(r.Body)
	}))
	defer srv.Close()
	h, err := NewHTTP(HTTPOptions{URL: srv.URL, Framing: marked, MaxBatch: 100})
	if err != nil {
		t.Fatal(err)
	}
	h.MarkPolicy(context.Background(), "v1")
	h.WriteRecord(attributed("v1", ""), sessionRecord("a", 0, enforcement.Input))
	h.WriteRecord(attributed("v2", ""), sessionRecord("a", 1, enforcement.Input))
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	wantKinds(t, kinds(t, got.String()), "m:v1", "r:a", "m:v2", "r:a")
	if h.Delivered() != 2 || h.Dropped() != 0 {
		t.Errorf("delivered %d dropped %d, want 2 and 0", h.Delivered(), h.Dropped())
	}
}

// The Redis stream gets the marker as an entry of its own, under
// StreamMarkerField, before the records it covers.
func TestRedisStreamPolicyMarkers(t *testing.T) {
	url, _ := redistest.Start(t)
	s, err := NewRedisStream(RedisStreamOptions{URL: url, Framing: marked})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.MarkPolicy(context.Background(), "v1"); err != nil {
		t.Fatal(err)
	}
	s.WriteRecord(attributed("v1", ""), sessionRecord("a", 0, enforcement.Input))
	s.WriteRecord(attributed("v2", ""), sessionRecord("a", 1, enforcement.Input))
	var got []string
	for _, m := range xrange(t, url, DefaultStream) {
		for field, v := range m.Values {
			got = append(got, field+"="+kinds(t, v.(string))[0])
		}
	}
	wantKinds(t, got, "policy=m:v1", "record=r:a", "policy=m:v2", "record=r:a")
}
