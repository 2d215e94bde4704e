package main

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime/debug"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// runBareProxy is the no-policy baseline role: a standard library reverse
// proxy in front of the upstream, with a connection pool as large as the
// gateway's so the comparison is about policy, not pooling, and the
// gateway's default collector pace (config.DefaultGCPercent, unless GOGC is
// set) so it is not about GC settings either.
func runBareProxy(_ context.Context, fl *flag.FlagSet, args []string) (http.Handler, func(), error) {
	target := fl.String("upstream", "", "upstream base URL")
	if err := fl.Parse(args); err != nil {
		return nil, nil, err
	}
	if *target == "" {
		return nil, nil, errors.New("bareproxy: --upstream is required")
	}
	u, err := url.Parse(*target)
	if err != nil {
		return nil, nil, err
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(config.DefaultGCPercent)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 1024
	tr.MaxIdleConnsPerHost = 1024
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
		},
		Transport:     tr,
		FlushInterval: -1, // stream as the upstream writes, like a real SSE proxy
	}
	return rp, tr.CloseIdleConnections, nil
}
