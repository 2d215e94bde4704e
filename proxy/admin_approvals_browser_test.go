package proxy

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/hooks-gateway/hooks-gateway/approvals"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// browserBinaries are the names a Chromium-family browser goes by.
var browserBinaries = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}

// headlessBrowser starts a headless Chromium that sends the admin token as
// Basic credentials, as an operator's browser would after the login
// prompt. Without a browser the test is skipped, unless CI is set: CI
// installs one, so there a missing binary fails instead.
func headlessBrowser(t *testing.T) context.Context {
	t.Helper()
	var bin string
	for _, name := range browserBinaries {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if ci := os.Getenv("CI"); ci != "" && ci != "0" && ci != "false" {
			t.Fatalf("no Chromium on PATH (CI must install it; looked for %s)", strings.Join(browserBinaries, ", "))
		}
		t.Skip("no Chromium on PATH; install chromium to run the admin page test")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelBrowser(); cancelAlloc() })
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+approvalsAdminToken))
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("start browser: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": basic}}); err != nil {
		t.Fatalf("browser credentials: %v", err)
	}
	return ctx
}

// TestApprovalsPageInBrowser drives the admin page in a real browser:
// Approve releases a waiting request, Reject denies one, and one left
// alone times out unresolved.
func TestApprovalsPageInBrowser(t *testing.T) {
	browser := headlessBrowser(t)
	gw := approvalsGateway(t, approvalsConfig("5m", ""))
	page := gw.URL + "/admin/"

	decideInPage := func(session, text, button, notice string) <-chan chatResult {
		t.Helper()
		done := chatAsync(gw.URL, session, text)
		a := pendingFor(t, gw.URL, session)
		row := chromedp.ID("approval-" + a.ID)
		if err := chromedp.Do(browser, chromedp.Navigate(page), chromedp.WaitVisible(row)); err != nil {
			t.Fatalf("open the page: %v", err)
		}
		rowText, err := chromedp.Run(browser, chromedp.Text(row))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(browser, chromedp.Click(chromedp.ID(button+"-"+a.ID)), chromedp.WaitVisible(chromedp.ID("notice"))); err != nil {
			t.Fatalf("%s in the page: %v", button, err)
		}
		shown, err := chromedp.Run(browser, chromedp.Text(chromedp.ID("notice")))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{session, string(enforcement.PreModelCall), "policy:needs_approval", "every model call needs an operator", approvals.Redacted} {
			if !strings.Contains(rowText, want) {
				t.Errorf("the page's row lacks %q: %s", want, rowText)
			}
		}
		if strings.Contains(rowText, text) {
			t.Errorf("the page shows the redacted message text: %s", rowText)
		}
		if shown != notice {
			t.Errorf("notice after %s = %q, want %q", button, shown, notice)
		}
		return done
	}

	if r := result(t, decideInPage("sess-approve", "APPROVE-ME-7", "approve", "Approved.")); r.err != nil || r.text != "APPROVE-ME-7" {
		t.Fatalf("approved in the page, but the request got %q %v", r.text, r.err)
	}
	r := result(t, decideInPage("sess-reject", "REJECT-ME-8", "reject", "Rejected."))
	if status, code := statusAndCode(t, r.err); status != http.StatusForbidden || code != "approval:rejected" {
		t.Fatalf("rejected in the page, but the request got %d %s", status, code)
	}

	// A request nobody decides: a gateway with a short timeout.
	short := approvalsGateway(t, approvalsConfig("2s", ""))
	done := chatAsync(short.URL, "sess-ignored", "IGNORE-ME-9")
	a := pendingFor(t, short.URL, "sess-ignored")
	listed := present(t, browser, short.URL+"/admin/", "approval-"+a.ID)
	if !listed {
		t.Errorf("the page does not list the pending approval %s", a.ID)
	}
	r = result(t, done)
	if status, code := statusAndCode(t, r.err); code != enforcement.ReasonApprovalUnresolved || status != http.StatusServiceUnavailable {
		t.Fatalf("undecided request got %d %s, want 503 %s", status, code, enforcement.ReasonApprovalUnresolved)
	}
	if !present(t, browser, short.URL+"/admin/", "empty") {
		t.Error("the timed-out approval is still listed")
	}
}

// present opens url and reports whether it has an element with id.
func present(t *testing.T, browser context.Context, url, id string) bool {
	t.Helper()
	if err := chromedp.Do(browser, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	found, err := chromedp.Run(browser, chromedp.Evaluate[bool](`document.getElementById(`+strconv.Quote(id)+`) !== null`))
	if err != nil {
		t.Fatal(err)
	}
	return found
}
