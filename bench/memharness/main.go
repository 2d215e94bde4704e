// Command memharness measures a gateway binary's peak memory under many
// concurrent buffered streams: it starts the binary (allow-all policy,
// loopback) in front of an upstream of its own that answers every call
// with a stream of -size bytes, sends -n streaming chat calls at once,
// and prints the process's peak RSS (VmHWM) and the answers' statuses.
// Linux only (it reads /proc). Run it against two builds to compare:
//
//	go build -o /tmp/gw ./cmd/hooks-gateway
//	go run ./bench/memharness -bin /tmp/gw
//	GOMEMLIMIT=921MiB go run ./bench/memharness -bin /tmp/gw   # as in a 1 GiB container
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

func main() {
	bin := flag.String("bin", "", "gateway binary")
	n := flag.Int("n", 300, "concurrent streams")
	port := flag.String("port", "18555", "port")
	upport := flag.String("upport", "19555", "upstream port")
	size := flag.Int("size", 2400000, "answer bytes")
	flag.Parse()
	dir, _ := os.MkdirTemp("", "mem")
	// The upstream: every answer is a stream of about size bytes.
	chunk := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"` + strings.Repeat("word ", 240) + `"},"finish_reason":null}]}` + "\n\n"
	chunks := *size / len(chunk)
	up := &http.Server{Addr: "127.0.0.1:" + *upport, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriterSize(w, 64<<10)
		bw.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
		for range chunks {
			bw.WriteString(chunk)
		}
		bw.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
		bw.Flush()
	})}
	go up.ListenAndServe()
	os.Setenv("UP_KEY", "k")
	cfg := dir + "/gw.yaml"
	os.WriteFile(cfg, []byte("listeners: {http: \"127.0.0.1:"+*port+"\"}\nupstreams: [{name: up, type: openai, base_url: \"http://127.0.0.1:"+*upport+"/v1\", api_key_env: UP_KEY}]\ninterceptors: [{name: ok, type: allow}]\nrecords: {sinks: [{type: jsonl, path: "+dir+"/r.jsonl}]}\n"), 0o600)
	cmd := exec.Command(*bin, "--config", cfg)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	defer cmd.Process.Kill()
	for i := 0; ; i++ {
		if r, err := http.Get("http://127.0.0.1:" + *port + "/healthz"); err == nil {
			r.Body.Close()
			break
		}
		if i > 100 {
			panic("gateway did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	body, _ := json.Marshal(map[string]any{"model": "mock", "stream": true, "messages": []any{map[string]any{"role": "user", "content": "hello"}}})
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	start := time.Now()
	for range *n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+*port+"/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			code := -1
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				code = resp.StatusCode
			}
			mu.Lock()
			statuses[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	f, _ := os.Open(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "VmHWM") {
			fmt.Printf("%s peak RSS: %s; statuses %v; %v\n", *bin, strings.TrimSpace(strings.TrimPrefix(sc.Text(), "VmHWM:")), statuses, time.Since(start).Round(time.Millisecond))
		}
	}
}
