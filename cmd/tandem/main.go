// Command tandem is a side-by-side benchmark and QA harness for network
// services. main only wires signals and exit codes; the other files hold
// the commands, each a mapping of flags onto the library.
package main

import (
	"context"
	"io"
	"os"

	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/progress"
)

func main() {
	os.Exit(mainWithSignals(os.Args[1:], os.Stdout, os.Stderr))
}

// mainWithSignals runs the command line with Ctrl-C wired (cli.WithSignals):
// the first SIGINT or SIGTERM cancels the run, which stops the targets and
// writes partial results; a second exits at once with status 130.
func mainWithSignals(args []string, stdout, stderr io.Writer) int {
	urgent := stderr
	if f, ok := stderr.(*os.File); ok {
		stderr = progress.NewConsole(f) // so a live status area can take the notices
		urgent = f                      // now, not at the status area's next redraw
	}
	ctx, stop := cli.WithSignals(context.Background(), stderr, urgent)
	defer stop()
	return run(ctx, args, stdout, stderr)
}
