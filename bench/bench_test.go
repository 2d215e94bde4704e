package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestPercentileNearestRank(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"single", ms(7), 0.99, 7 * time.Millisecond},
		{"median odd", ms(1, 2, 3), 0.5, 2 * time.Millisecond},
		{"median even takes the lower", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"p90 of 1..100", ms(hundred...), 0.90, 90 * time.Millisecond},
		{"max", ms(1, 5, 3), 1, 5 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tc.in...)
			got := summarize(in)
			if p := percentile(in, tc.p); p != tc.want {
				t.Errorf("percentile(%v) = %v, want %v", tc.p, p, tc.want)
			}
			if len(in) > 0 && got.Max != in[len(in)-1] {
				t.Errorf("max = %v, want the largest sample %v", got.Max, in[len(in)-1])
			}
		})
	}
}

func TestSummarizeSorts(t *testing.T) {
	got := summarize([]time.Duration{5, 1, 4, 2, 3})
	if got.P50 != 3 || got.Max != 5 {
		t.Fatalf("summarize of an unsorted sample: %+v", got)
	}
}

func TestParseStatCPU(t *testing.T) {
	// The command name holds spaces and a ')': fields are counted after
	// the last one. utime 250 + stime 50 ticks = 3 s.
	stat := "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 123 456 789"
	got, err := parseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if got != 3*time.Second {
		t.Fatalf("cpu = %v, want 3s", got)
	}
	if _, err := parseStatCPU("4242 (cmd) S 1 2"); err == nil {
		t.Fatal("a truncated stat line parsed")
	}
	if _, err := parseStatCPU("no parenthesis"); err == nil {
		t.Fatal("a stat line without a command name parsed")
	}
}

func TestParseStatCPUOwnProcess(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc here")
	}
	if _, err := parseStatCPU(string(b)); err != nil {
		t.Fatalf("own /proc/self/stat: %v", err)
	}
}

func TestParseStatusMem(t *testing.T) {
	status := "Name:\tgateway\nVmPeak:\t  900 kB\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\nThreads:\t8\n"
	hwm, rss, err := parseStatusMem(status)
	if err != nil {
		t.Fatal(err)
	}
	if hwm != 2048<<10 || rss != 1024<<10 {
		t.Fatalf("hwm %d rss %d, want %d and %d", hwm, rss, 2048<<10, 1024<<10)
	}
	if _, _, err := parseStatusMem("Name:\tx\nVmRSS:\t 1 kB\n"); err == nil {
		t.Fatal("status without VmHWM parsed")
	}
	if _, _, err := parseStatusMem("VmHWM:\t 1 MB\nVmRSS:\t 1 kB\n"); err == nil {
		t.Fatal("status with an unexpected unit parsed")
	}
}

func TestFindMetric(t *testing.T) {
	text := `# HELP go_goroutines Number of goroutines.
# TYPE go_goroutines gauge
go_goroutines_other 3
go_goroutines{x="y"} 4
go_goroutines 17
go_memstats_mallocs_total 1.234e+06
`
	if v, err := findMetric(strings.NewReader(text), "go_goroutines"); err != nil || v != 17 {
		t.Fatalf("go_goroutines = %v, %v; want 17", v, err)
	}
	if v, err := findMetric(strings.NewReader(text), "go_memstats_mallocs_total"); err != nil || v != 1.234e6 {
		t.Fatalf("mallocs = %v, %v; want 1.234e6", v, err)
	}
	if _, err := findMetric(strings.NewReader(text), "absent_total"); err == nil {
		t.Fatal("an absent metric was found")
	}
}

func TestFlatness(t *testing.T) {
	mk := func(rss ...int64) []SoakSample {
		out := make([]SoakSample, len(rss))
		for i, r := range rss {
			out[i] = SoakSample{RSS: r << 20, Goroutines: 30}
		}
		return out
	}
	if ok, why := flatness(mk(10, 40, 50, 50, 51, 50, 52, 51, 50)); !ok {
		t.Errorf("a warm-up then a plateau judged growing: %s", why)
	}
	if ok, why := flatness(mk(10, 20, 30, 40, 50, 60, 70, 80, 90)); ok {
		t.Errorf("steady growth judged flat: %s", why)
	}
	if ok, _ := flatness(mk(1, 2)); ok {
		t.Error("two samples judged flat")
	}
}

func TestNextRateGrows(t *testing.T) {
	for r := 250; r < 100000; r = nextRate(r) {
		n := nextRate(r)
		if n <= r || n%50 != 0 {
			t.Fatalf("nextRate(%d) = %d: must grow in steps of 50", r, n)
		}
	}
}

func TestRequestSizes(t *testing.T) {
	for _, b := range []struct {
		name  string
		build func(size int, stream, tools bool) []byte
	}{{"chat", chatRequest}, {"responses", responsesRequest}, {"messages", messagesRequest}} {
		for _, size := range []int{2048, 64 << 10} {
			req := b.build(size, true, true)
			if len(req) < size || len(req) > size+400 {
				t.Errorf("%s request of %d is %d bytes", b.name, size, len(req))
			}
			if !isStream(req) {
				t.Errorf("a streamed %s request is not recognised as one", b.name)
			}
		}
		if isStream(b.build(2048, false, false)) {
			t.Errorf("a non-streamed %s request is taken for a stream", b.name)
		}
	}
}

func TestCPUModel(t *testing.T) {
	info := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n"
	if got := cpuModel(info); got != "AMD EPYC 7B13" {
		t.Fatalf("cpuModel = %q", got)
	}
}

// The default scenario's policy is the embedded default's: the gateway's
// quickstart promise is what the bench measures.
func TestDefaultPolicyMatchesEmbeddedDefault(t *testing.T) {
	interceptors := func(path string) any {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return doc["interceptors"]
	}
	want := interceptors("../config/default.yaml")
	for _, f := range []string{"configs/default.yaml", "configs/redis.yaml", "configs/messages.yaml", "configs/incremental.yaml", "configs/messages_incremental.yaml", "configs/overload.yaml"} {
		got := interceptors(f)
		if !equalYAML(got, want) {
			t.Errorf("%s interceptors differ from config/default.yaml's", f)
		}
	}
	// The MCP scenario's policy is the default's plus a tools deny list.
	mcpList, _ := interceptors("configs/mcp.yaml").([]any)
	if len(mcpList) == 0 || !equalYAML(mcpList[:len(mcpList)-1], want) {
		t.Error("configs/mcp.yaml's interceptors are not config/default.yaml's plus one")
	} else if last, _ := mcpList[len(mcpList)-1].(map[string]any); last["type"] != "tools" {
		t.Errorf("configs/mcp.yaml's added interceptor is %v, want the tools deny list", last["type"])
	}
}

func equalYAML(a, b any) bool {
	ab, err1 := yaml.Marshal(a)
	bb, err2 := yaml.Marshal(b)
	return err1 == nil && err2 == nil && string(ab) == string(bb)
}

func TestWriteConfigFillsEveryPlaceholder(t *testing.T) {
	dir := t.TempDir()
	for _, sc := range scenarios() {
		path, err := writeConfig(dir, sc.config, map[string]string{"UPSTREAM": "http://127.0.0.1:1", "RECORDS": dir + "/r.jsonl", "REDIS_URL": "redis://127.0.0.1:2/0"})
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), "{{") {
			t.Fatalf("%s: placeholder left in %s", sc.name, b)
		}
	}
	if _, err := writeConfig(dir, "allow.yaml", map[string]string{}); err == nil {
		t.Fatal("a configuration with unfilled placeholders was written")
	}
}
