package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// peer is another proxy or gateway measured beside ours, from its own
// installation: nginx and Caddy (Debian's packages) and the Portkey
// gateway (npm, under bench/peers).
type peer struct {
	name string
	// start runs the peer in front of the upstream at upstreamURL, in dir;
	// an errSkip says the peer is not installed here.
	start func(ctx context.Context, dir, upstreamURL string) (*child, error)
	// headers, when set, are added to every request sent through the peer.
	headers func(path, upstreamURL string) map[string]string
}

// peerOptions say which peers to try and where the npm ones live.
type peerOptions struct {
	enabled bool
	npmDir  string // bench/peers: package.json, package-lock.json, node_modules
	// skipModelRouters leaves out the peers that route model calls only
	// (those with routing headers: Portkey), with a note.
	skipModelRouters bool
}

// peers lists the peers, in report order.
func peers(o peerOptions) []peer {
	return []peer{
		{name: "nginx", start: startNginx},
		{name: "caddy", start: startCaddy},
		{name: "portkey", start: func(ctx context.Context, dir, up string) (*child, error) {
			return startPortkey(ctx, dir, up, o.npmDir)
		}, headers: portkeyHeaders},
	}
}

// startNginx runs nginx in the foreground with a generated configuration.
func startNginx(ctx context.Context, dir, upstreamURL string) (*child, error) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		return nil, &errSkip{why: "nginx is not installed (apt-get install -y nginx)"}
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	o := nginxOptions{dir: dir, listen: addr, upstream: hostPort(upstreamURL)}
	if os.Geteuid() == 0 {
		o.user = "root"
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConfig(o)), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "nginx-error.log"), "-c", conf)
	return startExternal(ctx, dir, "nginx", addr, cmd)
}

// startCaddy runs `caddy run` with a generated JSON configuration; its
// data and configuration directories are the scenario's.
func startCaddy(ctx context.Context, dir, upstreamURL string) (*child, error) {
	bin, err := exec.LookPath("caddy")
	if err != nil {
		return nil, &errSkip{why: "caddy is not installed (apt-get install -y caddy)"}
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	b, err := caddyConfig(addr, hostPort(upstreamURL))
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "caddy.json")
	if err := os.WriteFile(conf, b, 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "--config", conf)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	if os.Getenv("GOGC") == "" { // Caddy is a Go program too: the gateway's default pace
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOGC=%d", config.DefaultGCPercent))
	}
	return startExternal(ctx, dir, "caddy", addr, cmd)
}

// startPortkey runs the Portkey gateway's Node server from npmDir
// (installed with `npm ci --prefix bench/peers`).
func startPortkey(ctx context.Context, dir, _ string, npmDir string) (*child, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, &errSkip{why: "node is not installed"}
	}
	script := filepath.Join(npmDir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js")
	if _, err := os.Stat(script); err != nil {
		return nil, &errSkip{why: "the Portkey gateway is not installed (npm ci --prefix " + npmDir + ")"}
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(node, script, "--port="+port, "--headless")
	cmd.Env = append(os.Environ(), "NODE_ENV=production")
	return startExternal(ctx, dir, "portkey", addr, cmd)
}

// startExternal starts cmd, logging to dir/name.log, and waits until addr
// accepts connections.
func startExternal(ctx context.Context, dir, name, addr string, cmd *exec.Cmd) (*child, error) {
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, addr: addr, logPath: logPath, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(c.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return c, nil
		}
		select {
		case <-c.exited:
			return nil, &childExitError{name: name, log: c.logTail()}
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("%s did not listen on %s within 30s: %s", name, addr, c.logTail())
		}
	}
}

// freeAddr is a loopback address with a port free a moment ago, for a
// peer that takes its port from its configuration.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// hostPort is the host:port of a base URL "http://host:port".
func hostPort(baseURL string) string { return strings.TrimPrefix(baseURL, "http://") }

// startedPeer is a peer process of one scenario.
type startedPeer struct {
	peer
	proc *child
}

// startPeers starts every peer it can; each one that is absent or does
// not start leaves a one-line note instead.
func startPeers(ctx context.Context, dir, upstreamURL string, o peerOptions) (started []startedPeer, notes []string) {
	if !o.enabled {
		return nil, nil
	}
	for _, p := range peers(o) {
		if o.skipModelRouters && p.headers != nil {
			notes = append(notes, p.name+" skipped: it routes model calls, not MCP")
			continue
		}
		c, err := p.start(ctx, dir, upstreamURL)
		if err != nil {
			var skip *errSkip
			if errors.As(err, &skip) {
				notes = append(notes, p.name+" skipped: "+skip.why)
			} else {
				notes = append(notes, p.name+" skipped: "+oneLine(err.Error()))
			}
			continue
		}
		started = append(started, startedPeer{peer: p, proc: c})
	}
	return started, notes
}
