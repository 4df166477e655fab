package fleet_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a
// coordinator, a worker, an embedded server or a connection that outlives
// its run.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// the HTTP client's idle-connection cleaners end on their own
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*TCPDialer).tcpAddrsClean"))
}
