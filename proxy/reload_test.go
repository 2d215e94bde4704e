package proxy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/metrics/metricstest"
	policyfile "github.com/hooks-gateway/hooks-gateway/policy"
)

func versionOf(t *testing.T, path string) string {
	t.Helper()
	v, err := policyfile.Version(path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestReloadOnFileWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	writeAtomically(t, path, denyWordPolicy("alpha"))
	g := startPolicyGateway(t, path, "")
	v1 := versionOf(t, path)
	if a := g.chat(t, "say alpha", nil); a.status != 403 || a.code != "policy:alpha" {
		t.Fatalf("first policy: %+v", a)
	} else if got := g.inputRecord(t, a.session).PolicyVersion; got != v1 {
		t.Fatalf("record policy_version %q, want %q", got, v1)
	}
	if err := g.asm.Reloader.Watch(t.Context(), path, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}

	writeAtomically(t, path, denyWordPolicy("beta"))
	v2 := versionOf(t, path)
	eventually(t, "the watcher reloads the rewritten file", func() bool { return g.asm.Server.Policy().Version == v2 })
	if a := g.chat(t, "say alpha", nil); a.status != 200 {
		t.Errorf("alpha after the reload: %+v", a)
	}
	a := g.chat(t, "say beta", nil)
	if a.status != 403 || a.code != "policy:beta" {
		t.Fatalf("beta after the reload: %+v", a)
	}
	if got := g.inputRecord(t, a.session).PolicyVersion; got != v2 {
		t.Errorf("record policy_version %q, want %q", got, v2)
	}
	_, st := g.adminJSON(t, "GET", "/admin/policy")
	if st["version"] != v2 || st["last_error"] != nil {
		t.Errorf("GET /admin/policy = %v", st)
	}
}

func TestReloadOnConfigMapSymlinkSwap(t *testing.T) {
	// The kubelet's layout: keys link through ..data, which links to a
	// timestamped directory; an update writes a new directory and renames
	// a new ..data link over the old one.
	dir := t.TempDir()
	publish := func(name, text string) {
		t.Helper()
		ts := filepath.Join(dir, name)
		if err := os.Mkdir(ts, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ts, "policy.yaml"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(name, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	publish("..2026_01_01_00_00_00.000000001", denyWordPolicy("alpha"))
	if err := os.Symlink(filepath.Join("..data", "policy.yaml"), filepath.Join(dir, "policy.yaml")); err != nil {
		t.Fatal(err)
	}
	g := startPolicyGateway(t, dir, "")
	v1 := g.asm.Server.Policy().Version
	if err := g.asm.Reloader.Watch(t.Context(), dir, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	publish("..2026_01_01_00_01_00.000000002", denyWordPolicy("beta"))
	v2 := versionOf(t, dir)
	if v2 == v1 {
		t.Fatal("the two policies share a version")
	}
	eventually(t, "the watcher sees the ..data swap", func() bool { return g.asm.Server.Policy().Version == v2 })
	if a := g.chat(t, "say beta", nil); a.status != 403 || a.code != "policy:beta" {
		t.Errorf("after the swap: %+v", a)
	}
}

func TestAdminReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writeAtomically(t, path, denyWordPolicy("alpha"))
	g := startPolicyGateway(t, path, "")
	v1 := g.asm.Server.Policy().Version

	status, out := g.adminJSON(t, "POST", "/admin/reload")
	if status != 200 || out["reloaded"] != false || out["version"] != v1 {
		t.Errorf("reload of unchanged files: %d %v", status, out)
	}

	writeAtomically(t, path, denyWordPolicy("beta"))
	v2 := versionOf(t, path)
	status, out = g.adminJSON(t, "POST", "/admin/reload")
	if status != 200 || out["reloaded"] != true || out["version"] != v2 {
		t.Fatalf("reload: %d %v", status, out)
	}

	// A bad file: the old chain stays, the error names file and line.
	writeAtomically(t, path, denyWordPolicy("gamma")+"  - name: broken\n    type: regex\n    action: deny\n    patterns: ['(']\n")
	status, out = g.adminJSON(t, "POST", "/admin/reload")
	errText, _ := out["error"].(string)
	if status != 422 || out["reloaded"] != false || out["version"] != v2 || !strings.Contains(errText, path+":") {
		t.Fatalf("bad reload: %d %v", status, out)
	}
	if strings.Contains(errText, "gamma") {
		t.Errorf("the error quotes the policy's patterns: %s", errText)
	}
	if a := g.chat(t, "say beta", nil); a.status != 403 || a.code != "policy:beta" {
		t.Errorf("the previous policy no longer applies: %+v", a)
	}
	if a := g.chat(t, "say gamma", nil); a.status != 200 {
		t.Errorf("the rejected policy applies: %+v", a)
	}
	_, st := g.adminJSON(t, "GET", "/admin/policy")
	if st["version"] != v2 || st["last_error"] != errText || st["last_error_at"] == nil {
		t.Errorf("GET /admin/policy after a failed reload = %v", st)
	}
	if srcs, _ := st["sources"].([]any); len(srcs) != 1 || srcs[0] != path {
		t.Errorf("sources = %v", st["sources"])
	}
	metricstest.WantSeries(t, scrape(t, g.main.URL), "agent_hooks_policy_reloads_total", map[string]float64{"result=ok": 1, "result=error": 1})

	// Fixing the file clears the error.
	writeAtomically(t, path, denyWordPolicy("gamma"))
	if status, out = g.adminJSON(t, "POST", "/admin/reload"); status != 200 || out["reloaded"] != true {
		t.Fatalf("reload after the fix: %d %v", status, out)
	}
	if _, st = g.adminJSON(t, "GET", "/admin/policy"); st["last_error"] != nil {
		t.Errorf("the error outlived the fix: %v", st)
	}
}

// TestReloadUnderLoad flips the policy between two versions many times
// while requests run: every answer must come from exactly one version, and
// every record of a request from the version its answer came from.
func TestReloadUnderLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	texts := map[string]string{"policy:alpha": denyWordPolicy("alpha"), "policy:beta": denyWordPolicy("beta")}
	writeAtomically(t, path, texts["policy:beta"])
	vBeta := versionOf(t, path)
	writeAtomically(t, path, texts["policy:alpha"])
	vAlpha := versionOf(t, path)
	versionFor := map[string]string{"policy:alpha": vAlpha, "policy:beta": vBeta}
	g := startPolicyGateway(t, path, "")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var flips int
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		next := "policy:beta"
		for ctx.Err() == nil {
			writeAtomically(t, path, texts[next])
			if _, err := g.asm.Reloader.Reload(context.Background()); err != nil {
				t.Errorf("reload %d: %v", flips, err)
				return
			}
			flips++
			next = map[string]string{"policy:alpha": "policy:beta", "policy:beta": "policy:alpha"}[next]
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var mu sync.Mutex
	answers := map[string]string{} // session → reason
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				a, err := g.tryChat("alpha and beta", "mock", nil)
				if err != nil {
					t.Errorf("request: %v", err)
					return
				}
				if a.status != 403 || versionFor[a.code] == "" || a.session == "" {
					t.Errorf("answer %+v: want a 403 from one of the two policies", a)
					return
				}
				mu.Lock()
				answers[a.session] = a.code
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	<-flipped
	if flips < 20 {
		t.Errorf("only %d flips", flips)
	}
	seen := map[string]int{}
	for _, code := range answers {
		seen[code]++
	}
	if seen["policy:alpha"] == 0 || seen["policy:beta"] == 0 {
		t.Errorf("answers per policy: %v (%d flips): the flips did not show", seen, flips)
	}
	// Each request is its own session, ended before its answer: all its
	// records are written.
	bySession := map[string][]wireRecord{}
	for _, r := range g.records(t) {
		bySession[r.SessionID] = append(bySession[r.SessionID], r)
	}
	for id, code := range answers {
		recs := bySession[id]
		if len(recs) == 0 {
			t.Fatalf("session %s has no records", id)
		}
		for _, r := range recs {
			if r.PolicyVersion != versionFor[code] {
				t.Fatalf("session %s answered %s but its %s record names %s", id, code, r.Point, r.PolicyVersion)
			}
		}
	}
	t.Logf("%d requests, %d flips, answers per policy %v", len(answers), flips, seen)
}

func TestTwoGatewaysShareAPolicyDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	writeAtomically(t, path, denyWordPolicy("alpha"))
	a := startPolicyGateway(t, dir, "")
	b := startPolicyGateway(t, dir, "")
	for _, g := range []*policyGateway{a, b} {
		if err := g.asm.Reloader.Watch(t.Context(), dir, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	writeAtomically(t, filepath.Join(dir, "zz-more.yaml"), denyWordPolicy("beta"))
	v2 := versionOf(t, dir)
	for name, g := range map[string]*policyGateway{"first": a, "second": b} {
		eventually(t, name+" gateway reloads", func() bool { return g.asm.Server.Policy().Version == v2 })
		if ans := g.chat(t, "beta", nil); ans.status != 403 || ans.code != "policy:beta" {
			t.Errorf("%s gateway after the change: %+v", name, ans)
		}
	}
}

// TestReloadRefusesTruncatedPolicyFile: truncating one file of a policy
// directory must not reload as "that file has no interceptors": the reload
// fails naming the file, the previous chain (the file's interceptors
// included) stays in effect, and the failure is counted.
func TestReloadRefusesTruncatedPolicyFile(t *testing.T) {
	dir := t.TempDir()
	writeAtomically(t, filepath.Join(dir, "10-alpha.yaml"), denyWordPolicy("alpha"))
	beta := filepath.Join(dir, "20-beta.yaml")
	writeAtomically(t, beta, denyWordPolicy("beta"))
	g := startPolicyGateway(t, dir, "")
	v1 := g.asm.Server.Policy().Version

	for i, text := range []string{"", "# emptied\n", "---\n"} {
		if err := os.WriteFile(beta, []byte(text), 0o600); err != nil { // truncated in place
			t.Fatal(err)
		}
		status, out := g.adminJSON(t, "POST", "/admin/reload")
		errText, _ := out["error"].(string)
		if status != 422 || out["reloaded"] != false || !strings.Contains(errText, beta+": the policy file is empty") {
			t.Fatalf("reload of a truncated file %q: %d %v", text, status, out)
		}
		if got := g.asm.Server.Policy().Version; got != v1 {
			t.Fatalf("policy version %s after the failed reload, want %s", got, v1)
		}
		if a := g.chat(t, "say beta", nil); a.status != 403 || a.code != "policy:beta" {
			t.Fatalf("the truncated file's interceptor was dropped: %+v", a)
		}
		if a := g.chat(t, "say alpha", nil); a.status != 403 || a.code != "policy:alpha" {
			t.Fatalf("the other file's interceptor: %+v", a)
		}
		metricstest.WantSeries(t, scrape(t, g.main.URL), "agent_hooks_policy_reloads_total", map[string]float64{"result=ok": 0, "result=error": float64(i + 1)})
	}
}
