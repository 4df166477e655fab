package main

import "github.com/tandem-bench/tandem/internal/cli"

// The exit codes by the names the tests use.
const (
	exitOK          = cli.ExitOK
	exitCheckFailed = cli.ExitCheckFailed
	exitBadInput    = cli.ExitBadInput
	exitTarget      = cli.ExitTarget
	exitInterrupted = cli.ExitInterrupted
)
