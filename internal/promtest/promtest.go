// Package promtest starts a real Prometheus server for tests.
package promtest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
)

// Start starts a real Prometheus server (the Debian package) scraping
// target (host:port) every second as job tandem-test, and returns its URL.
// Without the binary the test is skipped, or fails when the test command
// asked for it (TANDEM_REQUIRE_PROMETHEUS=1).
func Start(t testing.TB, target string) string {
	t.Helper()
	bin := tooltest.Need(t, "TANDEM_REQUIRE_PROMETHEUS", "prometheus")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: tandem-test\n    static_configs: [{targets: [%q]}]\n", target)), 0o644)
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=error")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://" + addr
	// Ready, and the target scraped once: Prometheus applies a new scrape
	// configuration a few seconds after it starts.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(url + "/api/v1/targets?state=active"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"health":"up"`) {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus did not scrape %s within 60 s:\n%s", target, logs.String())
		}
	}
}
