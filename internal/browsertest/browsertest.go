// Package browsertest opens pages in a real headless Chromium for tests,
// through the DevTools protocol (chromedp), and records what a page
// logged and asked for.
package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/tandem-bench/tandem/internal/tooltest"
)

// Chromium finds a headless Chromium. The test command installs the
// Debian package and sets TANDEM_REQUIRE_CHROMIUM=1, so there a missing
// browser fails the test; elsewhere the test is skipped.
func Chromium(t *testing.T) string {
	t.Helper()
	return tooltest.Need(t, "TANDEM_REQUIRE_CHROMIUM", "chromium", "chromium-browser", "google-chrome")
}

// Browser is one headless Chromium with one tab, for one test.
type Browser struct {
	// Ctx drives the tab (chromedp actions) until the test ends.
	Ctx context.Context
	mu  sync.Mutex
	// console and requests are what the tab logged and asked for.
	console, requests []string
}

// Open starts Chromium with a window of width×height; it is closed when
// the test ends.
func Open(t *testing.T, width, height int) *Browser {
	t.Helper()
	bin := Chromium(t)
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")), chromedp.WindowSize(width, height), chromedp.Flag("hide-scrollbars", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, stop := context.WithTimeout(ctx, 10*time.Minute) // a busy machine runs Chromium slowly; a hang guard only
	t.Cleanup(stop)
	b := &Browser{Ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			b.console = append(b.console, string(e.Type)+": "+strings.Join(args, " "))
		case *runtime.EventExceptionThrown:
			b.console = append(b.console, "exception: "+e.ExceptionDetails.Text+" "+e.ExceptionDetails.URL)
		case *log.EventEntryAdded:
			b.console = append(b.console, string(e.Entry.Source)+": "+e.Entry.Text)
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, e.Request.URL)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	b.must(t, func() error { _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); return err })
	b.must(t, func() error { _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); return err })
	b.must(t, func() error { _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); return err })
	b.must(t, func() error { return chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))) })
	return b
}

func (b *Browser) must(t *testing.T, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatalf("chromium: %v", err)
	}
}

// Go navigates to url and waits for the page's body.
func (b *Browser) Go(t *testing.T, url string) {
	t.Helper()
	b.must(t, func() error { return chromedp.Do(b.Ctx, chromedp.Navigate(url), chromedp.WaitReady("body")) })
}

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](t *testing.T, b *Browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.Ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %.60q: %v", js, err)
	}
	return v
}

// Console is what the pages logged so far: messages, exceptions and the
// browser's own entries (a script or a request the page's policy
// blocked).
func (b *Browser) Console() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.console)
}

// Requests are the URLs the pages asked for so far.
func (b *Browser) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.requests)
}

// Screenshot captures the window as PNG; with TANDEM_REPORT_SHOTS set it
// also writes the full page there as name.jpg, for a person to look at.
func (b *Browser) Screenshot(t *testing.T, name string) []byte {
	t.Helper()
	shot, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("TANDEM_REPORT_SHOTS"); keep != "" {
		if full, err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(90)); err == nil {
			os.WriteFile(filepath.Join(keep, strings.NewReplacer("/", "-", " ", "-").Replace(name)+".jpg"), full, 0o644)
		}
	}
	return shot
}
