package interceptors

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Remote call defaults and bounds.
const (
	defaultRemoteTimeout = 2 * time.Second
	defaultRemoteRetries = 1
	maxRemoteRetries     = 5
	// maxRemoteBody caps a verdict service's answer; a verdict is small.
	maxRemoteBody = 1 << 20
	// remoteRetryPause is the pause before the first retry, doubled after
	// each: a refused connection is usually a restarting service.
	remoteRetryPause = 50 * time.Millisecond
	remoteUserAgent  = "hooks-gateway"
)

// remoteOptions are the keys every remote verdict type (http, opa) takes.
type remoteOptions struct {
	URL string `yaml:"url"`
	// Timeout bounds one attempt: connect, send, answer.
	Timeout time.Duration `yaml:"timeout"`
	// Retries are further attempts after a connection that could not be
	// established; never after a request was sent.
	Retries *int `yaml:"retries"`
	// BearerTokenEnv names the variable holding the Authorization bearer.
	BearerTokenEnv string            `yaml:"bearer_token_env"`
	TLS            *remoteTLSOptions `yaml:"tls"`
	Headers        map[string]string `yaml:"headers"`
}

// remoteTLSOptions configures server verification and client certificates.
type remoteTLSOptions struct {
	CAFile     string `yaml:"ca_file"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`
}

// remoteClient posts JSON to one verdict service over a pooled connection
// set of its own.
type remoteClient struct {
	client  *http.Client
	header  http.Header
	timeout time.Duration
	retries int
}

// errAttemptTimeout is the cause of an attempt's own deadline, told apart
// from the caller's cancellation.
var errAttemptTimeout = errors.New("remote attempt timed out")

// reservedHeader reports whether the client sets the header itself.
func reservedHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Authorization", "Content-Type", "Content-Length", "Host",
		"Accept", "Connection", "Transfer-Encoding", "User-Agent":
		return true
	}
	return false
}

// newRemoteClient validates o and builds its client.
func newRemoteClient(spec config.Interceptor, env Env, o remoteOptions) (*remoteClient, []config.Problem) {
	var ps []config.Problem
	c := &remoteClient{header: http.Header{}, timeout: o.Timeout, retries: defaultRemoteRetries}
	u, err := url.Parse(o.URL)
	switch {
	case o.URL == "":
		ps = append(ps, spec.Problemf("url", "is required"))
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		ps = append(ps, spec.Problemf("url", "must be an absolute http:// or https:// URL"))
	case u.User != nil:
		ps = append(ps, spec.Problemf("url", "must not carry credentials; use bearer_token_env"))
	case u.RawQuery != "" || u.Fragment != "":
		ps = append(ps, spec.Problemf("url", "must not have a query or fragment"))
	}
	if c.timeout == 0 {
		c.timeout = defaultRemoteTimeout
	}
	switch {
	case c.timeout < 0:
		ps = append(ps, spec.Problemf("timeout", "must be positive (got %v)", c.timeout))
	case env.InterceptorTimeout > 0 && c.timeout >= env.InterceptorTimeout:
		// Otherwise the engine's timeout always fires first and the
		// service's answer is never waited for as configured.
		ps = append(ps, spec.Problemf("timeout", "%v must be less than enforcement.interceptor_timeout (%v)", c.timeout, env.InterceptorTimeout))
	}
	if o.Retries != nil {
		if c.retries = *o.Retries; c.retries < 0 || c.retries > maxRemoteRetries {
			ps = append(ps, spec.Problemf("retries", "must be between 0 and %d (got %d)", maxRemoteRetries, c.retries))
		}
	}
	if o.BearerTokenEnv != "" {
		switch tok := os.Getenv(o.BearerTokenEnv); {
		case tok == "":
			ps = append(ps, spec.Problemf("bearer_token_env", "environment variable %s is not set", o.BearerTokenEnv))
		case strings.ContainsFunc(tok, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			ps = append(ps, spec.Problemf("bearer_token_env", "environment variable %s holds control characters", o.BearerTokenEnv))
		default:
			c.header.Set("Authorization", "Bearer "+tok)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(o.Headers)) {
		value, field := o.Headers[name], "headers."+name
		switch {
		case !validHeaderName(name):
			ps = append(ps, spec.Problemf(field, "is not a valid header name"))
		case reservedHeader(name):
			ps = append(ps, spec.Problemf(field, "is set by the gateway and cannot be configured"))
		case strings.ContainsAny(value, "\r\n\x00"):
			ps = append(ps, spec.Problemf(field, "must not contain line breaks or NUL"))
		default:
			c.header.Set(name, value)
		}
	}
	c.header.Set("Content-Type", "application/json")
	c.header.Set("Accept", "application/json")
	c.header.Set("User-Agent", remoteUserAgent)
	tlsConf, tps := remoteTLS(spec, o.TLS)
	ps = append(ps, tps...)
	if o.TLS != nil && err == nil && u.Scheme == "http" {
		ps = append(ps, spec.Problemf("tls", "needs an https:// url"))
	}
	if len(ps) > 0 {
		return nil, ps
	}
	dialer := &net.Dialer{Timeout: c.timeout, KeepAlive: 30 * time.Second}
	c.client = &http.Client{
		Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         dialer.DialContext,
			TLSClientConfig:     tlsConf,
			TLSHandshakeTimeout: c.timeout,
			ForceAttemptHTTP2:   true,
			MaxIdleConns:        64,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		},
		// A verdict service that redirects is misconfigured; following
		// would resend the context somewhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// remoteTLS loads the CA and client certificate files.
func remoteTLS(spec config.Interceptor, o *remoteTLSOptions) (*tls.Config, []config.Problem) {
	if o == nil {
		return nil, nil
	}
	var ps []config.Problem
	conf := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		conf.RootCAs = x509.NewCertPool()
		switch {
		case err != nil:
			ps = append(ps, spec.Problemf("tls.ca_file", "cannot be read: %v", err))
		case !conf.RootCAs.AppendCertsFromPEM(pem):
			ps = append(ps, spec.Problemf("tls.ca_file", "holds no PEM certificate"))
		}
	}
	switch {
	case (o.CertFile == "") != (o.KeyFile == ""):
		ps = append(ps, spec.Problemf("tls", "cert_file and key_file go together"))
	case o.CertFile != "":
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			ps = append(ps, spec.Problemf("tls.cert_file", "cannot load the key pair: %v", err))
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, ps
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// post sends body to target and returns the answer's body. It retries
// only attempts whose connection could not be established, when nothing
// of the request went out. Errors name the failure (status, size, timeout),
// never the body.
func (c *remoteClient) post(ctx context.Context, target string, body []byte) ([]byte, error) {
	pause := remoteRetryPause
	for attempt := 0; ; attempt++ {
		data, retry, err := c.attempt(ctx, target, body)
		if err == nil || !retry || attempt >= c.retries {
			return data, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (retrying after: %w)", ctx.Err(), err)
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// attempt makes one request; retry is true only when it failed before a
// connection was obtained.
func (c *remoteClient) attempt(ctx context.Context, target string, body []byte) (data []byte, retry bool, err error) {
	actx, cancel := context.WithTimeoutCause(ctx, c.timeout, errAttemptTimeout)
	defer cancel()
	defer func() {
		// The attempt's own deadline is the interceptor's timeout, not a
		// failure of the service's answer.
		if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout) {
			data, retry = nil, false
			err = fmt.Errorf("%w: no answer within %v", enforcement.ErrInterceptorTimeout, c.timeout)
		}
	}()
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(actx, trace), http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("remote verdict request: %w", err)
	}
	req.Header = c.header.Clone()
	resp, err := c.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL
		}
		var certErr *tls.CertificateVerificationError
		retry := !connected.Load() && ctx.Err() == nil && !errors.As(err, &certErr)
		return nil, retry, fmt.Errorf("remote verdict service unreachable: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Drained (a little) so the connection can be reused.
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		return nil, false, fmt.Errorf("remote verdict service answered status %d", resp.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		return nil, false, fmt.Errorf("remote verdict service answered a non-JSON content type")
	}
	data, err = io.ReadAll(io.LimitReader(resp.Body, maxRemoteBody+1))
	if err != nil {
		return nil, false, fmt.Errorf("remote verdict service: reading the answer: %w", err)
	}
	if len(data) > maxRemoteBody {
		return nil, false, fmt.Errorf("remote verdict service answered more than %d bytes", maxRemoteBody)
	}
	return data, false, nil
}
