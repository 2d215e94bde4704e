package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// Docker cannot run in CI (no engine), so the image is never built there.
// These tests keep the Dockerfile from rotting instead: they parse it,
// check its shape, run its `go build` command and start the binary the
// way the image's ENTRYPOINT does.

type instruction struct {
	cmd  string // upper case
	args string
	line int
}

type stage struct {
	image, platform, name string
	instrs                []instruction
}

// parseDockerfile splits a Dockerfile into stages of instructions, joining
// continuation lines and dropping comments.
func parseDockerfile(t *testing.T, data []byte) []stage {
	t.Helper()
	var instrs []instruction
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if body, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		instrs = append(instrs, instruction{strings.ToUpper(cmd), strings.TrimSpace(args), start})
		cur.Reset()
	}
	var stages []stage
	for _, in := range instrs {
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			var s stage
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				if v, ok := strings.CutPrefix(f[0], "--platform="); ok {
					s.platform = v
				}
				f = f[1:]
			}
			if len(f) == 0 {
				t.Fatalf("Dockerfile:%d: FROM without an image", in.line)
			}
			s.image = f[0]
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("Dockerfile:%d: %s before the first FROM", in.line, in.cmd)
			}
			continue
		}
		stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
	}
	return stages
}

func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// buildCommand is the builder's `go build` invocation.
type buildCommand struct {
	env     map[string]string // assignments before `go build`
	args    []string          // after `go build`, the -o value included
	output  string            // the -o value
	pkg     string
	runLine int
}

// shellWords splits a command line the way sh would for the simple cases a
// Dockerfile RUN uses: blanks separate words, double and single quotes
// group.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

func findBuildCommand(t *testing.T, s stage) buildCommand {
	t.Helper()
	for _, in := range s.all("RUN") {
		words := shellWords(in.args)
		i := -1
		for j := 0; j+1 < len(words); j++ {
			if words[j] == "go" && words[j+1] == "build" {
				i = j
			}
		}
		if i < 0 {
			continue
		}
		bc := buildCommand{env: map[string]string{}, runLine: in.line}
		for _, w := range words[:i] {
			k, v, ok := strings.Cut(w, "=")
			if !ok {
				t.Fatalf("Dockerfile:%d: unexpected %q before go build", in.line, w)
			}
			bc.env[k] = v
		}
		bc.args = words[i+2:]
		for j, a := range bc.args {
			if a == "-o" && j+1 < len(bc.args) {
				bc.output = bc.args[j+1]
			}
		}
		if n := len(bc.args); n > 0 {
			bc.pkg = bc.args[n-1]
		}
		return bc
	}
	t.Fatalf("the build stage has no RUN ... go build")
	return buildCommand{}
}

// TestDockerfile checks the image's shape: a Go toolchain stage building a
// static binary, a minimal runtime stage running it as a non-root user on
// the embedded default's port.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, readFile(t, "Dockerfile"))
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and a runtime stage", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]

	// The builder's Go matches go.mod's go directive.
	var goVersion string
	for _, line := range strings.Split(string(readFile(t, "go.mod")), "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			goVersion = strings.TrimSpace(v)
		}
	}
	parts := strings.SplitN(goVersion, ".", 3)
	if len(parts) < 2 {
		t.Fatalf("go.mod: go directive %q", goVersion)
	}
	minor := parts[0] + "." + parts[1]
	if !regexp.MustCompile(`^golang:` + regexp.QuoteMeta(minor) + `([.-]|$)`).MatchString(build.image) {
		t.Errorf("build stage image %q, want golang:%s (go.mod says go %s)", build.image, minor, goVersion)
	}
	if build.name == "" {
		t.Errorf("build stage has no name (FROM ... AS build)")
	}

	bc := findBuildCommand(t, build)
	if bc.env["CGO_ENABLED"] != "0" {
		t.Errorf("Dockerfile:%d: go build without CGO_ENABLED=0: the runtime image has no libc", bc.runLine)
	}
	if bc.pkg != "./cmd/hooks-gateway" {
		t.Errorf("Dockerfile:%d: builds %q, want ./cmd/hooks-gateway", bc.runLine, bc.pkg)
	}
	if bc.output == "" {
		t.Fatalf("Dockerfile:%d: go build without -o", bc.runLine)
	}

	// The runtime stage: minimal, and given the binary from the builder.
	if final.image != "scratch" && !strings.HasPrefix(final.image, "gcr.io/distroless/static") {
		t.Errorf("runtime image %q, want scratch or gcr.io/distroless/static*", final.image)
	}
	var binary string
	for _, in := range final.all("COPY") {
		f := strings.Fields(in.args)
		if len(f) == 3 && f[0] == "--from="+build.name && f[1] == bc.output {
			binary = f[2]
		}
	}
	if binary == "" {
		t.Fatalf("the runtime stage does not COPY --from=%s %s", build.name, bc.output)
	}
	ep := final.all("ENTRYPOINT")
	if len(ep) != 1 {
		t.Fatalf("runtime stage: %d ENTRYPOINTs, want 1", len(ep))
	}
	var argv []string
	if err := json.Unmarshal([]byte(ep[0].args), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("ENTRYPOINT %s: want the exec (JSON) form, the image has no shell", ep[0].args)
	}
	if argv[0] != binary {
		t.Errorf("ENTRYPOINT runs %q, the binary is copied to %q", argv[0], binary)
	}

	// Non-root, numerically (so Kubernetes' runAsNonRoot can verify it).
	users := final.all("USER")
	if len(users) == 0 {
		t.Fatal("runtime stage: no USER: the gateway would run as root")
	}
	user := strings.Fields(users[len(users)-1].args)[0]
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("USER %q: want a numeric, non-zero uid", user)
	}

	// The port of the embedded default, which `docker run -p 8080:8080
	// hooks-gateway` relies on.
	for _, name := range []string{config.EnvListen, config.EnvRedisURL, config.EnvOpenAIKey, config.EnvOpenAIBaseURL} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	_, port, err := net.SplitHostPort(config.Default().Listeners.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	exposed := false
	for _, in := range final.all("EXPOSE") {
		for _, p := range strings.Fields(in.args) {
			exposed = exposed || strings.TrimSuffix(p, "/tcp") == port
		}
	}
	if !exposed {
		t.Errorf("runtime stage does not EXPOSE %s, the embedded default's port", port)
	}

	// The HEALTHCHECK must run the binary's own healthcheck in exec form:
	// the runtime image has no shell or curl.
	hcs := final.all("HEALTHCHECK")
	if len(hcs) != 1 {
		t.Errorf("runtime stage has %d HEALTHCHECK instructions, want 1", len(hcs))
	}
	for _, in := range hcs {
		if !strings.Contains(in.args, `CMD ["/hooks-gateway", "healthcheck"]`) {
			t.Errorf("Dockerfile:%d: HEALTHCHECK %s must exec the binary's healthcheck (no shell in the image)", in.line, in.args)
		}
	}
	for _, in := range final.all("RUN") {
		t.Errorf("Dockerfile:%d: RUN in the runtime stage: %s has no shell", in.line, final.image)
	}
}

// dockerignore is a .dockerignore file's patterns, in order.
type dockerignore []struct {
	re     *regexp.Regexp
	negate bool
}

func parseDockerignore(t *testing.T, data []byte) dockerignore {
	t.Helper()
	var d dockerignore
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		neg := strings.HasPrefix(line, "!")
		p := strings.Trim(strings.TrimPrefix(line, "!"), "/")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(p); i++ {
			switch c := p[i]; {
			case strings.HasPrefix(p[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(p[i:], "**"):
				re.WriteString(".*")
				i++
			case c == '*':
				re.WriteString("[^/]*")
			case c == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString("$")
		d = append(d, struct {
			re     *regexp.Regexp
			negate bool
		}{regexp.MustCompile(re.String()), neg})
	}
	return d
}

// excludes reports whether path (slash-separated, relative to the context)
// is left out of the build context: the last pattern matching it or one of
// its parent directories decides.
func (d dockerignore) excludes(path string) bool {
	excluded := false
	parts := strings.Split(path, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		for _, p := range d {
			if p.re.MatchString(prefix) {
				excluded = !p.negate
			}
		}
	}
	return excluded
}

// TestDockerignoreKeepsBuildInputs: every source directory and embedded
// file the binary is built from is in the build context, and the bulky or
// sensitive things are not.
func TestDockerignoreKeepsBuildInputs(t *testing.T) {
	d := parseDockerignore(t, readFile(t, ".dockerignore"))
	for _, p := range []string{".git", "deploy/kubernetes/gateway.yaml", "proxy.test", "hooks-gateway"} {
		if !d.excludes(p) {
			t.Errorf(".dockerignore keeps %s in the build context", p)
		}
	}
	out := run(t, root, "go", "list", "-deps", "-f", `{{if not .Standard}}{{.Module.Path}} {{.Dir}} {{join .GoFiles ","}} {{join .EmbedFiles ","}}{{end}}`, "./cmd/hooks-gateway")
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	need := []string{"go.mod", "go.sum"}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "github.com/hooks-gateway/hooks-gateway" {
			continue
		}
		rel, err := filepath.Rel(abs, f[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, group := range f[2:] {
			for _, file := range strings.Split(group, ",") {
				need = append(need, filepath.ToSlash(filepath.Join(rel, file)))
			}
		}
	}
	if len(need) < 10 {
		t.Fatalf("go list found only %v", need)
	}
	for _, p := range need {
		if d.excludes(p) {
			t.Errorf(".dockerignore excludes %s, which go build ./cmd/hooks-gateway needs", p)
		}
	}
}

// TestDockerBuildCommand runs the Dockerfile's own `go build` command (to a
// temporary file instead of its -o path), checks that the result is
// statically linked, and starts it as the image's ENTRYPOINT would with no
// arguments: the embedded default (mock model) must serve out of the box,
// and SIGTERM must drain and exit 0.
func TestDockerBuildCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gateway binary")
	}
	stages := parseDockerfile(t, readFile(t, "Dockerfile"))
	bc := findBuildCommand(t, stages[0])
	bin := filepath.Join(t.TempDir(), "hooks-gateway")
	args := []string{"build"}
	for i := 0; i < len(bc.args); i++ {
		if bc.args[i] == "-o" {
			args = append(args, "-o", bin)
			i++
			continue
		}
		args = append(args, bc.args[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = os.Environ()
	for k, v := range bc.env {
		if strings.Contains(v, "$") {
			v = "" // $TARGETOS, $TARGETARCH: unset means the host's
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary has a dynamic loader (PT_INTERP): it would not run on %s", stages[len(stages)-1].image)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary links %v", libs)
	}
	f.Close()
	if runtime.GOOS != "linux" {
		return
	}

	// docker run -p 8080:8080 hooks-gateway, minus the container: no
	// arguments, no OPENAI_API_KEY, only the listen address moved to a
	// free loopback port.
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	gw := exec.Command(bin)
	gw.Env = []string{"HOOKS_GATEWAY_LISTEN=127.0.0.1:" + strconv.Itoa(port)}
	var stderr syncBuffer
	gw.Stdout = io.Discard
	gw.Stderr = &stderr
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- gw.Wait() }()
	reaped := false
	t.Cleanup(func() {
		if !reaped {
			gw.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not 200 within 15s (%v)\n%s", err, stderr.String())
		}
		select {
		case err := <-exited:
			reaped = true
			t.Fatalf("the gateway exited: %v\n%s", err, stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if status, body := chat(t, base, promptAllowed, false); status != http.StatusOK || !strings.Contains(body, "echo: "+promptAllowed) {
		t.Errorf("chat on the embedded default: %d %s", status, body)
	}
	if status, body := chat(t, base, promptLeak, false); status != http.StatusForbidden || !strings.Contains(body, "policy:credential_leak") {
		t.Errorf("credential leak on the embedded default: %d %s", status, body)
	}
	for _, path := range []string{"/healthz", "/metrics"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", path, resp.Status)
		}
	}
	if err := gw.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		reaped = true
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Errorf("still running 15s after SIGTERM\n%s", stderr.String())
	}
}
