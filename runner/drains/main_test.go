// Package drains_test runs studies of AMQP drains end to end against real
// RabbitMQ nodes: the example study's consumers, failing and interrupted
// drains, publish-and-consume scenarios. They live apart from the runner's
// own tests so that the two run side by side: most of their time is spent
// waiting for a broker.
package drains_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/driver/amqpdrv"
	"github.com/tandem-bench/tandem/internal/rabbittest"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/runner/internal/runtest"
)

// broker is the RabbitMQ node the tests share, except those whose study
// starts its own.
var broker rabbittest.Shared

// The test binary doubles as tandem's raw consumer (tandem consume), the
// command of a study's raw consumer targets.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == "consume" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		if err := amqpdrv.ConsumeEnv(ctx, os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	broker.Stop()
	os.Exit(code)
}

// options runs a study with this test binary as tandem, its results in a
// temporary directory; TANDEM_TEST_PROGRESS=1 shows its progress.
func options(t *testing.T, progress io.Writer) runner.Options {
	if progress == nil && os.Getenv("TANDEM_TEST_PROGRESS") == "1" {
		progress = os.Stderr
	}
	return runner.Options{Out: t.TempDir(), Self: os.Args[0], Version: "test", StopGrace: 5 * time.Second, Progress: progress}
}

// readResults reads a run's results.json, checked against the schema.
func readResults(t *testing.T, dir string) *results.Results {
	t.Helper()
	return runtest.ReadResults(t, filepath.Join(dir, runner.ResultsFile))
}
