package approvals

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// DefaultWebhookTimeout bounds one webhook call.
const DefaultWebhookTimeout = 10 * time.Second

// maxResolutionBytes bounds a webhook's answer; a resolution is small.
const maxResolutionBytes = 1 << 20

// WebhookOptions configures a Webhook.
type WebhookOptions struct {
	// URL receives each ApprovalRequest as a JSON POST.
	URL string
	// Token, when set, is sent as "Authorization: Bearer <Token>".
	Token string
	// Timeout bounds one call (DefaultWebhookTimeout when 0).
	Timeout time.Duration
	// Client defaults to a client that refuses redirects.
	Client *http.Client
}

// Webhook is an enforcement.ApprovalResolver that POSTs the §9
// ApprovalRequest to a URL and reads an ApprovalResolution back. Any
// failure (transport, timeout, non-2xx status, an answer that is not a
// resolution object, or has a member approval.schema.json does not define)
// is an error, which the engine enforces as deny
// host_error:approval_resolver_failed; an answer naming a member twice has
// no single reading and is denied host_error:verdict_invalid. The echo rule
// and the verdict checks are the engine's, so that each is reported under
// its §9 reason; the carried verdict is read against the closed verdict
// schema (enforcement.ParseApprovalResolutionStrict).
type Webhook struct {
	url     string
	token   string
	timeout time.Duration
	client  *http.Client
}

var _ enforcement.ApprovalResolver = (*Webhook)(nil)

// NewWebhook validates opts and returns a Webhook.
func NewWebhook(opts WebhookOptions) (*Webhook, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is not quoted: its query may hold a credential.
		return nil, errors.New("approvals: webhook url must be an absolute http:// or https:// URL")
	}
	w := &Webhook{url: opts.URL, token: opts.Token, timeout: opts.Timeout, client: opts.Client}
	if w.timeout <= 0 {
		w.timeout = DefaultWebhookTimeout
	}
	if w.client == nil {
		// Following a redirect would send the request, context included,
		// somewhere nobody configured.
		w.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return w, nil
}

// Timeout is the bound of one call.
func (w *Webhook) Timeout() time.Duration { return w.timeout }

// Resolve implements enforcement.ApprovalResolver.
func (w *Webhook) Resolve(ctx context.Context, req enforcement.ApprovalRequest) (enforcement.ApprovalResolution, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return enforcement.ApprovalResolution{}, fmt.Errorf("approval webhook: encode request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return enforcement.ApprovalResolution{}, fmt.Errorf("approval webhook: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if w.token != "" {
		hreq.Header.Set("Authorization", "Bearer "+w.token)
	}
	resp, err := w.client.Do(hreq)
	if err != nil {
		// *url.Error quotes the URL; keep only the cause.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return enforcement.ApprovalResolution{}, fmt.Errorf("approval webhook: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxResolutionBytes))
		return enforcement.ApprovalResolution{}, fmt.Errorf("approval webhook: status %d", resp.StatusCode)
	}
	tree, err := readResolution(io.LimitReader(resp.Body, maxResolutionBytes+1))
	if err != nil {
		return enforcement.ApprovalResolution{}, fmt.Errorf("approval webhook: %w", err)
	}
	return enforcement.ParseApprovalResolutionStrict(tree)
}

// readResolution reads a webhook's answer: at most maxResolutionBytes,
// decoded strictly by the decoder every remote verdict shares
// (enforcement.DecodeAnswer: a member named twice is an invalid answer).
func readResolution(r io.Reader) (any, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	if len(data) > maxResolutionBytes {
		return nil, fmt.Errorf("answer exceeds %d bytes", maxResolutionBytes)
	}
	return enforcement.DecodeAnswer(data)
}
