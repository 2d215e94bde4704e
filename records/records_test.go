package records

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

func record(seq int64, msg string) *enforcement.Record {
	return &enforcement.Record{
		InterceptionPoint: enforcement.PostModelCall,
		Mode:              enforcement.Enforce,
		Verdict:           enforcement.TransformTo("$target.content", "SECRET-VALUE "+msg),
		SessionID:         "s1",
		Sequence:          seq,
		Composition:       enforcement.Composition{Profile: enforcement.SequentialFirstDeny, OnApproval: "stop"},
	}
}

func TestJSONLAppendsOneRecordPerLineWithoutPayload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	w, err := OpenJSONL(path, JSONLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.WriteRecord(context.Background(), record(int64(i), "x")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[int64]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "SECRET-VALUE") {
			t.Fatalf("a transform value reached the sink: %s", line)
		}
		var r struct {
			Sequence int64 `json:"sequence"`
			Verdict  struct {
				Transform map[string]any `json:"transform"`
			} `json:"verdict"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line is not JSON: %q", line)
		}
		if r.Verdict.Transform["path"] != "$target.content" {
			t.Errorf("transform path lost: %s", line)
		}
		seen[r.Sequence] = true
	}
	if len(seen) != 50 {
		t.Fatalf("%d distinct records, want 50", len(seen))
	}
}

type failing struct{}

func (failing) WriteRecord(context.Context, *enforcement.Record) error { return errors.New("down") }

func TestFanoutKeepsWritingPastAFailingSink(t *testing.T) {
	var sb strings.Builder
	w := NewWriter(&sb)
	err := Fanout{failing{}, w}.WriteRecord(context.Background(), record(7, "y"))
	if err == nil || !strings.Contains(err.Error(), "down") {
		t.Fatalf("error = %v, want the failing sink's", err)
	}
	if !strings.Contains(sb.String(), `"sequence":7`) {
		t.Fatalf("second sink did not get the record: %q", sb.String())
	}
}
