//go:build linux

package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
	"github.com/tandem-bench/tandem/internal/tooltest"
)

// inTerminal runs tandem (this test binary, as the CLI) with its stdout and
// stderr on a pseudo-terminal of cols×rows, and returns all it wrote.
func inTerminal(t *testing.T, env []string, cols, rows uint16, args ...string) []byte {
	t.Helper()
	out, code := inTerminalUntil(t, env, cols, rows, "", args...)
	if code != 0 {
		t.Fatalf("tandem %v: exit %d\n%s", args, code, out)
	}
	return out
}

// syncBuffer is a buffer one goroutine writes while another reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// inTerminalUntil is inTerminal that, when interruptAt is not empty,
// presses Ctrl-C (SIGINT to tandem) once the terminal has shown it; it
// returns the exit status too.
func inTerminalUntil(t *testing.T, env []string, cols, rows uint16, interruptAt string, args ...string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	f, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pty.Setsize(f, &pty.Winsize{Cols: cols, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	// the terminal is the child's stdin, stdout and stderr, and its
	// controlling terminal (Ctty names the child's descriptor 0)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	tty.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&out, f) // ends with EIO when the child has exited
		done <- err
	}()
	wait := make(chan error, 1)
	go func() { wait <- cmd.Wait() }()
	deadline := time.After(3 * time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-wait:
			break loop
		case <-tick.C:
			if interruptAt != "" && bytes.Contains(out.Bytes(), []byte(interruptAt)) {
				cmd.Process.Signal(os.Interrupt)
				interruptAt = ""
			}
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("tandem %v did not finish in 3 minutes", args)
		}
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the terminal's output did not end")
	}
	code := 0
	if exit, ok := waitErr.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if waitErr != nil {
		t.Fatal(waitErr)
	}
	return out.Bytes(), code
}

// screen is what a terminal of cols×rows shows after out.
func screen(out []byte, cols, rows int) string {
	e := vt.NewEmulator(cols, rows)
	e.Write(out)
	return e.String()
}

// In a terminal a run shows its plan, then a status area at the bottom
// (the step, the round and target measured, elapsed and what is left, a
// bar, how to stop) while each finished level scrolls above it as the
// report's rows; the status area is gone when the results are printed.
// With NO_COLOR nothing but text is written (off a terminal, neither:
// TestRunProgressJSON).
func TestRunInTerminal(t *testing.T) {
	tooltest.Long(t)
	t.Parallel() // waits on targets
	study := smallStudy(t)
	t.Run("live", func(t *testing.T) {
		t.Parallel()
		out := inTerminal(t, []string{"TERM=xterm-256color"}, 100, 40, "run", study, "--pin=false", "--out", t.TempDir())
		raw := string(out)
		for _, want := range []string{"small: the plan", "Ctrl-C: stop and keep what is measured", "] scenario getblock-latency · round ",
			" of 3 · ", " elapsed · about ", " left", "Scenario getblock-latency"} {
			if !strings.Contains(raw, want) {
				t.Errorf("the terminal never showed %q", want)
			}
		}
		if !strings.Contains(raw, "\x1b[") {
			t.Error("no control sequence: the status area was never drawn")
		}
		final := screen(out, 100, 40)
		if strings.Contains(final, "Ctrl-C: stop") || strings.Contains(final, "about ") {
			t.Errorf("the status area is still on the final screen:\n%s", final)
		}
		lines := strings.Split(strings.TrimRight(final, " \n"), "\n")
		if tail := strings.Join(lines[max(len(lines)-3, 0):], "\n"); !strings.Contains(tail, "reports: ") || !strings.HasSuffix(tail, "report.txt") {
			t.Errorf("the screen ends with\n%s\nwant the reports' paths:\n%s", tail, final)
		}
		if !strings.Contains(final, "results: ") || !strings.Contains(final, "machine: ") {
			t.Errorf("the final screen lacks the results:\n%s", final)
		}
		// the report ends with its summary, a line per comparison
		if i := strings.LastIndex(final, "\nSummary"); i < 0 || !strings.Contains(final[i:], "getblock-latency, 1 client: b ") {
			t.Errorf("the final screen has no summary with the scenario's verdict:\n%s", final)
		}
	})
	// Ctrl-C during a round: its notice shows above the status area, the
	// area goes, the screen ends with the partial results and exit 130
	t.Run("Ctrl-C", func(t *testing.T) {
		t.Parallel()
		out, code := inTerminalUntil(t, []string{"TERM=xterm-256color"}, 100, 40, "round 2 of 3", "run", study, "--pin=false", "--out", t.TempDir())
		final := screen(out, 100, 40)
		if code != exitInterrupted || !strings.Contains(final, "tandem: interrupted: stopping targets and writing partial results") ||
			!strings.Contains(final, "INTERRUPTED") || strings.Contains(final, "Ctrl-C: stop and keep") || strings.Contains(final, "elapsed · about") {
			t.Errorf("exit %d; final screen:\n%s", code, final)
		}
	})
	t.Run("NO_COLOR", func(t *testing.T) {
		t.Parallel()
		out := inTerminal(t, []string{"TERM=xterm-256color", "NO_COLOR=1"}, 100, 40, "run", study, "--pin=false", "--out", t.TempDir())
		if i := bytes.IndexByte(out, 0x1b); i >= 0 {
			t.Errorf("a control sequence with NO_COLOR set: %q", out[max(i-40, 0):min(i+40, len(out))])
		}
		if !bytes.Contains(out, []byte("] scenario getblock-latency · ")) || !bytes.Contains(out, []byte("results: ")) {
			t.Errorf("with NO_COLOR: no progress lines or no results:\n%s", out)
		}
		// the report, from its last table to the paths of the files written,
		// fits the terminal's 100 columns
		report := string(out[bytes.LastIndex(out, []byte("\nScenario ")):bytes.LastIndex(out, []byte("\nresults: "))])
		for _, l := range strings.Split(report, "\n") {
			if n := utf8.RuneCountInString(strings.TrimRight(l, "\r")); n > 100 {
				t.Errorf("a line of %d runes on a terminal of 100 columns: %q", n, l)
			}
		}
	})
}

// tandem load in a terminal keeps one live line (rate, the last second's
// p50 and p99, counts, time left) and leaves only its summary; with
// NO_COLOR it writes no control sequence.
func TestLoadInTerminal(t *testing.T) {
	tooltest.Long(t)
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		io.WriteString(w, "pong")
	}))
	defer ts.Close()
	args := []string{"load", ts.URL + "/ping", "--duration", "3s", "--concurrency", "2"}
	out := inTerminal(t, []string{"TERM=xterm-256color"}, 120, 30, args...)
	raw := string(out)
	for _, want := range []string{" / 3s · ", "/s · last second p50 ", ", p99 ", " ok, 0 errors · about "} {
		if !strings.Contains(raw, want) {
			t.Errorf("the live line never showed %q:\n%q", want, raw)
		}
	}
	final := screen(out, 120, 30)
	if strings.Contains(final, "last second") || !strings.Contains(final, "requests") {
		t.Errorf("the final screen keeps the live line or lacks the summary:\n%s", final)
	}
	plain := inTerminal(t, []string{"TERM=xterm-256color", "NO_COLOR=1"}, 120, 30, args...)
	if bytes.IndexByte(plain, 0x1b) >= 0 || !bytes.Contains(plain, []byte("requests")) {
		t.Errorf("with NO_COLOR: a control sequence, or no summary:\n%q", plain)
	}
}
