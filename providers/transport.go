package providers

import (
	"errors"
	"net"
	"net/http"
	"time"
)

// Transport tuning for a proxy: many concurrent requests to one host.
const (
	defaultConnectTimeout = 30 * time.Second
	tlsHandshakeTimeout   = 10 * time.Second
	tcpKeepAlive          = 30 * time.Second
	idleConnTimeout       = 90 * time.Second
	maxIdleConnsPerHost   = 256
	maxIdleConns          = 1024
	// readBufferSize is each HTTP/1 connection's read buffer. A streamed
	// answer arrives as hundreds of small chunks, which the SSE readers
	// take in small pieces: over plaintext HTTP/1 with net/http's default
	// 4 KiB, every 4 KiB that has arrived costs a read of the connection;
	// with 32 KiB a 57 KiB answer takes 3 instead of 16
	// (TestStreamReadSyscalls). Over TLS it means fewer tls.Conn reads;
	// HTTP/2 connections use a buffer of their own and ignore it. It is
	// allocated once per connection, so the pool's idle connections
	// (up to 1,024) hold it too.
	readBufferSize = 32 << 10
)

// NewTransport is the tuned transport of a proxy's upstream, for the
// gateway's other upstreams (MCP servers); see newTransport.
func NewTransport(connectTimeout, responseHeaderTimeout time.Duration) *http.Transport {
	return newTransport(connectTimeout, responseHeaderTimeout)
}

// newTransport returns the transport an upstream owns. connectTimeout bounds
// dialing (0 means 30s); responseHeaderTimeout, when set, bounds the wait
// for the status line after the request is written.
func newTransport(connectTimeout, responseHeaderTimeout time.Duration) *http.Transport {
	if connectTimeout <= 0 {
		connectTimeout = defaultConnectTimeout
	}
	dialer := &net.Dialer{Timeout: connectTimeout, KeepAlive: tcpKeepAlive}
	return &http.Transport{
		Proxy:             http.ProxyFromEnvironment,
		DialContext:       dialer.DialContext,
		ForceAttemptHTTP2: true, // a custom DialContext would otherwise disable h2
		// The defaults (2 idle per host) make a busy proxy dial for almost
		// every request.
		MaxIdleConns:          maxIdleConns,
		MaxIdleConnsPerHost:   maxIdleConnsPerHost,
		IdleConnTimeout:       idleConnTimeout,
		TLSHandshakeTimeout:   min(tlsHandshakeTimeout, connectTimeout),
		ResponseHeaderTimeout: responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		ReadBufferSize:        readBufferSize,
		// DisableCompression stays false: net/http asks for gzip and hands
		// back decoded bytes, which is what the proxy must parse anyway.
	}
}

// newHTTPClient builds the client of one upstream. rt replaces the tuned
// transport (tests); timeout bounds the whole exchange including reading
// the body, on top of the caller's ctx.
func newHTTPClient(name string, timeout, connectTimeout time.Duration, rt http.RoundTripper, forward []string) (*httpClient, error) {
	if timeout < 0 || connectTimeout < 0 {
		return nil, errors.New("negative timeout")
	}
	if rt == nil {
		rt = newTransport(connectTimeout, timeout)
	}
	return &httpClient{
		name: name,
		client: &http.Client{
			Transport: rt,
			Timeout:   timeout,
			// A proxy relays a redirect rather than re-sending a request
			// body (and its key) to another location.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		forward: forward,
	}, nil
}

// closeIdle closes the idle connections of the upstream's transport, for
// configuration reloads that replace the upstream.
func (c *httpClient) closeIdle() { c.client.CloseIdleConnections() }
