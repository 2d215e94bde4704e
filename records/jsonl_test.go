package records

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// readTrail decodes every line of the files at paths, failing the test on
// a line that is not a whole record.
func readTrail(t *testing.T, paths ...string) []*enforcement.Record {
	t.Helper()
	var out []*enforcement.Record
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			var r enforcement.Record
			if err := r.UnmarshalJSON(sc.Bytes()); err != nil {
				t.Fatalf("%s:%d: torn or invalid line %q: %v", p, n, sc.Text(), err)
			}
			out = append(out, &r)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return out
}

func sessionRecord(session string, seq int64, point enforcement.Point) *enforcement.Record {
	r := record(seq, "x")
	r.SessionID = session
	r.InterceptionPoint = point
	r.Verdict = enforcement.Allow()
	return r
}

func TestJSONLRotationUnderConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "records.jsonl")
	const maxBytes, writers, perWriter = 4 << 10, 8, 150
	w, err := OpenJSONL(path, JSONLOptions{MaxBytes: maxBytes, MaxFiles: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				r := sessionRecord(fmt.Sprintf("w%d", g), int64(i), enforcement.Input)
				if err := w.WriteRecord(context.Background(), r); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	files, err := filepath.Glob(path + "*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("%d files after %d records of ~%d bytes each with max_bytes %d: rotation did not happen", len(files), writers*perWriter, 300, maxBytes)
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > maxBytes {
			t.Errorf("%s is %d bytes, over max_bytes %d", f, st.Size(), maxBytes)
		}
	}
	// Every record is present exactly once, whole, and each writer's
	// records appear in the order it wrote them across the rotated files.
	next := map[string]int64{}
	for _, r := range readTrail(t, TrailOrder(files)...) {
		if r.Sequence != next[r.SessionID] {
			t.Fatalf("session %s: sequence %d, want %d", r.SessionID, r.Sequence, next[r.SessionID])
		}
		next[r.SessionID]++
	}
	for g := range writers {
		if got := next[fmt.Sprintf("w%d", g)]; got != perWriter {
			t.Errorf("writer %d: %d records found, want %d", g, got, perWriter)
		}
	}
}

func TestJSONLRotationKeepsMaxFilesAndRemovesTheOldest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "records.jsonl")
	one, _ := line(sessionRecord("s", 0, enforcement.Input))
	// Three records per file.
	w, err := OpenJSONL(path, JSONLOptions{MaxBytes: int64(3*len(one) + 10), MaxFiles: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := w.WriteRecord(context.Background(), sessionRecord("s", int64(i), enforcement.Input)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(path + "*")
	want := []string{path, path + ".1", path + ".2"}
	if fmt.Sprint(files) != fmt.Sprint(want) {
		t.Fatalf("files = %v, want %v", files, want)
	}
	var seqs []int64
	for _, r := range readTrail(t, path+".2", path+".1", path) {
		seqs = append(seqs, r.Sequence)
	}
	// 20 records, 3 per file: files hold 12-14, 15-17 and 18-19.
	if fmt.Sprint(seqs) != "[12 13 14 15 16 17 18 19]" {
		t.Fatalf("kept sequences %v, want the newest eight", seqs)
	}
	if err := w.WriteRecord(context.Background(), sessionRecord("s", 20, enforcement.Input)); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after close: %v, want ErrClosed", err)
	}
}

func TestJSONLOversizedRecordGetsAFileOfItsOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	w, err := OpenJSONL(path, JSONLOptions{MaxBytes: 10, MaxFiles: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.WriteRecord(context.Background(), sessionRecord("s", int64(i), enforcement.Input)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	for i, p := range []string{path + ".2", path + ".1", path} {
		recs := readTrail(t, p)
		if len(recs) != 1 || recs[0].Sequence != int64(i) {
			t.Errorf("%s holds %d records, want only sequence %d", p, len(recs), i)
		}
	}
}

func TestJSONLReopenCountsTheExistingSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	one, _ := line(sessionRecord("s", 0, enforcement.Input))
	opts := JSONLOptions{MaxBytes: int64(2 * len(one)), MaxFiles: 3}
	for i := range 3 { // a restart between every record
		w, err := OpenJSONL(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecord(context.Background(), sessionRecord("s", int64(i), enforcement.Input)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(readTrail(t, path+".1")); got != 2 {
		t.Errorf("%s.1 holds %d records, want 2 (the first two, written before two restarts)", path, got)
	}
	if got := len(readTrail(t, path)); got != 1 {
		t.Errorf("%s holds %d records, want 1", path, got)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, %v; want 0600", info.Mode().Perm(), err)
	}
}

func TestJSONLOpenFails(t *testing.T) {
	_, err := OpenJSONL(filepath.Join(t.TempDir(), "missing-dir", "records.jsonl"), JSONLOptions{})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want a wrapped not-exist error", err)
	}
}
