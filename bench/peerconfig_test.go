package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestNginxConfig(t *testing.T) {
	dir := t.TempDir()
	conf := nginxConfig(nginxOptions{dir: dir, listen: "127.0.0.1:18081", upstream: "127.0.0.1:18080"})
	for _, want := range []string{
		"daemon off;",
		"worker_processes auto;",
		"listen 127.0.0.1:18081;",
		"server 127.0.0.1:18080;",
		"proxy_pass http://mock;",
		"proxy_buffering off;",
		"proxy_http_version 1.1;",
		`proxy_set_header Connection "";`,
		"keepalive 1024;",
		"pid " + filepath.Join(dir, "nginx.pid") + ";",
		"access_log off;",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "user ") {
		t.Errorf("no user was asked for, config sets one:\n%s", conf)
	}
	if got := nginxConfig(nginxOptions{dir: dir, listen: "a:1", upstream: "b:2", user: "root"}); !strings.Contains(got, "user root;") {
		t.Errorf("user root not set:\n%s", got)
	}
	if strings.Count(conf, "{") != strings.Count(conf, "}") {
		t.Errorf("unbalanced braces:\n%s", conf)
	}

	// nginx itself judges the file when it is installed.
	bin, err := exec.LookPath("nginx")
	if err != nil {
		t.Log("nginx not installed: syntax not checked by nginx")
		return
	}
	o := nginxOptions{dir: dir, listen: "127.0.0.1:18081", upstream: "127.0.0.1:18080"}
	if os.Geteuid() == 0 {
		o.user = "root"
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(nginxConfig(o)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-t", "-p", dir, "-e", filepath.Join(dir, "err.log"), "-c", path).CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}

func TestCaddyConfig(t *testing.T) {
	b, err := caddyConfig("127.0.0.1:18082", "127.0.0.1:18080")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Admin struct {
			Disabled bool `json:"disabled"`
		} `json:"admin"`
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Listen         []string `json:"listen"`
					AutomaticHTTPS struct {
						Disable bool `json:"disable"`
					} `json:"automatic_https"`
					Routes []struct {
						Handle []struct {
							Handler       string `json:"handler"`
							FlushInterval int    `json:"flush_interval"`
							Upstreams     []struct {
								Dial string `json:"dial"`
							} `json:"upstreams"`
						} `json:"handle"`
					} `json:"routes"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	srv, ok := cfg.Apps.HTTP.Servers["bench"]
	if !ok || len(srv.Routes) != 1 || len(srv.Routes[0].Handle) != 1 {
		t.Fatalf("want one server with one route and one handler:\n%s", b)
	}
	h := srv.Routes[0].Handle[0]
	if h.Handler != "reverse_proxy" || h.FlushInterval != -1 || len(h.Upstreams) != 1 || h.Upstreams[0].Dial != "127.0.0.1:18080" {
		t.Errorf("handler = %+v, want reverse_proxy to 127.0.0.1:18080 with flush_interval -1", h)
	}
	if len(srv.Listen) != 1 || srv.Listen[0] != "127.0.0.1:18082" || !srv.AutomaticHTTPS.Disable || !cfg.Admin.Disabled {
		t.Errorf("listen %v, automatic_https disabled %v, admin disabled %v", srv.Listen, srv.AutomaticHTTPS.Disable, cfg.Admin.Disabled)
	}

	bin, err := exec.LookPath("caddy")
	if err != nil {
		t.Log("caddy not installed: configuration not checked by caddy")
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "caddy.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "validate", "--config", path)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("caddy validate: %v\n%s", err, out)
	}
}

func TestPortkeyHeaders(t *testing.T) {
	h := portkeyHeaders(chatPath, "http://127.0.0.1:18080")
	if h["x-portkey-provider"] != "openai" || h["x-portkey-custom-host"] != "http://127.0.0.1:18080/v1" {
		t.Errorf("chat headers = %v", h)
	}
	if h := portkeyHeaders(messagesPath, "http://u"); h["x-portkey-provider"] != "anthropic" {
		t.Errorf("messages provider = %q, want anthropic", h["x-portkey-provider"])
	}
}

func TestHostPort(t *testing.T) {
	for in, want := range map[string]string{"http://127.0.0.1:80": "127.0.0.1:80", "127.0.0.1:80": "127.0.0.1:80"} {
		if got := hostPort(in); got != want {
			t.Errorf("hostPort(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPeersSkipWhenDisabledOrAbsent(t *testing.T) {
	if started, notes := startPeers(t.Context(), t.TempDir(), "http://127.0.0.1:1", peerOptions{}); started != nil || notes != nil {
		t.Errorf("disabled peers: started %v, notes %v", started, notes)
	}
	// The npm peer from a directory without it: a one-line note, no start.
	_, err := startPortkey(t.Context(), t.TempDir(), "http://127.0.0.1:1", t.TempDir())
	var skip *errSkip
	if !errors.As(err, &skip) || strings.Contains(skip.why, "\n") {
		t.Fatalf("portkey from an empty dir: %v, want a one-line skip", err)
	}
}
