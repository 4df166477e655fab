// Package tooltest decides, for tests, what runs where: a test that needs
// an external tool (valgrind, Chromium, Prometheus, CometBFT, RabbitMQ, Redis)
// finds it on PATH, fails without it when the test command asked for it
// (TANDEM_REQUIRE_*=1) and is skipped otherwise; under go test -short,
// tests that need a tool or take seconds are skipped, so the inner loop
// stays under a minute.
package tooltest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/link/veth"
)

// Need returns the path of the first of names on PATH. Under -short the
// test is skipped; without any of them it fails if the environment
// variable require is "1" (the test command sets it) and is skipped if not.
func Need(t testing.TB, require string, names ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: needs %s", strings.Join(names, " or "))
	}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, require, strings.Join(names, " or ")+" is not on PATH")
	return ""
}

// Missing ends a test whose tool is missing (why says what is missing):
// it fails if the environment variable require is "1", and is skipped
// otherwise.
func Missing(t testing.TB, require, why string) {
	t.Helper()
	if os.Getenv(require) == "1" {
		t.Fatalf("%s, and %s=1", why, require)
	}
	t.Skipf("%s (./test.sh installs it)", why)
}

// Long skips a test that takes seconds under go test -short.
func Long(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: takes seconds")
	}
}

// Kernel ends a test that needs the kernel's network path (package veth)
// where this process may not make it: it fails if TANDEM_REQUIRE_KERNEL is
// "1" (the test command sets it as root on Linux), and is skipped if not.
func Kernel(t testing.TB) {
	t.Helper()
	if err := veth.Probe(); err != nil {
		Missing(t, "TANDEM_REQUIRE_KERNEL", "the kernel's network path cannot be made here: "+err.Error())
	}
}
