package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/buger/jsonparser"
	"github.com/coder/websocket"
	"github.com/tandem-bench/tandem/finding"
	"github.com/tandem-bench/tandem/internal/cli"
	"github.com/tandem-bench/tandem/internal/golden"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/sample"
)

// A fixed open-loop sample that missed its rate: the reports and the
// reasons given are compared with golden files.
func TestLoadReportsGolden(t *testing.T) {
	d := func(base int64) results.Distribution {
		return results.Distribution{Min: base, Mean: float64(base) * 2.5, P50: base * 2, P90: base * 3, P99: base * 5, P999: base * 8, Max: base * 10}
	}
	lag := d(10_000)
	first := d(50_000)
	s := results.Sample{Requests: 40_000, OK: 39_990, Errors: map[string]int64{"http:503": 7, "timeout": 3}, DurationNs: 10_000_000_000,
		Throughput: 3_999, Unit: "message", UnitsPerS: 39_990, LatencyNs: d(200_000), ServiceTimeNs: d(100_000),
		ScheduleLagNs: &lag, FirstMessageNs: &first, Dropped: 10_000, OfferedRate: 5_000, AchievedRate: 4_000}
	warnings := finding.Generator(s, 0, 2)
	for _, c := range []struct {
		file   string
		render func(*bytes.Buffer) error
	}{
		{"testdata/load.txt", func(b *bytes.Buffer) error {
			return report.Sample(b, "text", report.SampleRun{Sample: s, Warnings: warnings})
		}},
		{"testdata/load.md", func(b *bytes.Buffer) error {
			return report.Sample(b, "md", report.SampleRun{Sample: s, Warnings: warnings})
		}},
	} {
		var b bytes.Buffer
		if err := c.render(&b); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, c.file, b.Bytes())
	}
	if len(warnings) != 1 {
		t.Fatalf("warnings %q; want one about the missed rate", warnings)
	}
	// a mix's run: a line per call, in the mix's order
	mix := results.Sample{Requests: 1000, OK: 998, Errors: map[string]int64{"jsonrpc:-32602": 2}, DurationNs: 2_000_000_000,
		Throughput: 499, Unit: "request", UnitsPerS: 499, LatencyNs: d(100_000),
		Parts: []results.Sample{{Requests: 801, OK: 801, Errors: map[string]int64{}, LatencyNs: d(90_000)},
			{Requests: 199, OK: 197, Errors: map[string]int64{"jsonrpc:-32602": 2}, LatencyNs: d(140_000)}}}
	run := report.SampleRun{Sample: mix, Parts: []string{"balance", "send"}}
	for format, file := range map[string]string{"text": "testdata/load-mix.txt", "md": "testdata/load-mix.md"} {
		var b bytes.Buffer
		if err := report.Sample(&b, format, run); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, file, b.Bytes())
	}
}

// closedPort is a port on 127.0.0.1 that refuses connections: one this
// test listened on and closed.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// A target that cannot be reached is bad input (exit 2) found before the
// run, with the reason; nothing is printed on stdout. Port 99999 and an
// unresolvable host used to run as thousands of "transport" failures and
// exit 0; a refused port gave no reason.
func TestLoadUnreachable(t *testing.T) {
	refused := closedPort(t)
	for _, c := range []struct {
		target string
		want   []string
	}{
		{"http://" + refused + "/", []string{"cannot reach " + refused + ": connection refused"}},
		{"grpc://" + refused + "/a.B/C", []string{"cannot reach grpc://" + refused + "/a.B/C", refused + ": connection refused"}},
		{"ws://" + refused + "/", []string{"cannot reach ws://" + refused + "/", refused + ": connection refused"}},
		{"http://127.0.0.1:99999/", []string{"port 99999: want 1 to 65535"}},
		{"grpc://127.0.0.1:99999/a.B/C", []string{"port 99999: want 1 to 65535"}},
		{"ws://127.0.0.1:99999/", []string{"port 99999: want 1 to 65535"}},
		{"http://127.0.0.1:0/", []string{"port 0: want 1 to 65535"}},
		{"amqp://guest:secret@127.0.0.1:99999/", []string{"port 99999: want 1 to 65535"}},
	} {
		code, out, stderr := tandem(t, "load", c.target, "--jsonrpc", "m", "--requests", "24", "--timeout", "2s")
		ok := code == exitBadInput && out == "" && !strings.Contains(stderr, "secret")
		for _, w := range c.want {
			ok = ok && strings.Contains(stderr, w)
		}
		if !ok {
			t.Errorf("load %s: exit %d, stderr %q, stdout %q; want exit 2 before the run, saying %q", c.target, code, stderr, out, c.want)
		}
	}
	// A host that cannot resolve: in a child with Go's resolver, which
	// refuses a name that is not a domain name (a label ends in "-") on the
	// spot, after /etc/hosts: nothing is asked of a DNS server.
	cmd := exec.Command(os.Args[0], "load", "http://no-such-host-.invalid/", "--requests", "24", "--timeout", "2s")
	cmd.Env = append(os.Environ(), "GODEBUG=netdns=go")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := runBounded(t, cmd, 20*time.Second)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitBadInput || out.Len() != 0 ||
		!strings.Contains(errb.String(), "cannot reach no-such-host-.invalid:80: cannot resolve no-such-host-.invalid") {
		t.Errorf("unresolvable host: %v, stderr %q, stdout %q; want exit 2 before the run, naming the host", err, errb.String(), out.String())
	}
}

// runBounded runs cmd and kills it if it outlives limit.
func runBounded(t *testing.T, cmd *exec.Cmd, limit time.Duration) error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v: still running after %v", cmd.Args, limit)
		return nil
	}
}

// A target that answers the checks before the run and then goes away: the
// run completes, every request is refused, and tandem prints the results
// and exits 1 instead of 0.
func TestLoadNoRequestSucceeded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // answer one request, closing the listener first: then every connection is refused
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			n, _ := c.Read(make([]byte, 4096))
			if n == 0 { // a connection without a request (the reachability check)
				c.Close()
				continue
			}
			ln.Close()
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			c.Close()
			return
		}
	}()
	code, out, stderr := tandem(t, "load", "http://"+ln.Addr().String()+"/", "--requests", "20", "--timeout", "2s", "--duration", "10s", "--format", "json")
	var got struct {
		Requests, OK int64
		Errors       map[string]int64
		Interrupted  *bool
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("exit %d, stderr %q: not the results: %v\n%s", code, stderr, err, out)
	}
	if code != exitCheckFailed || !strings.Contains(stderr, "no request succeeded (refused×20)") {
		t.Errorf("exit %d, stderr %q; want exit 1 saying no request succeeded (refused×20)", code, stderr)
	}
	if got.Requests != 20 || got.OK != 0 || got.Errors["refused"] != 20 || got.Interrupted == nil || *got.Interrupted {
		t.Errorf("results %+v; want 20 requests, 20 refused, interrupted false", got)
	}
}

// startWS serves JSON-RPC over WebSocket on ln (every call gets the result
// "pong") until the test ends.
func startWS(t *testing.T, ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			id, _ := jsonparser.GetInt(msg, "id")
			if c.Write(r.Context(), websocket.MessageText, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":"pong"}`, id)) != nil {
				return
			}
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// tandem load to IPv6 literals, as curl reaches them: HTTP used to fail
// every request as "protocol".
func TestLoadIPv6(t *testing.T) {
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "[::1]:0")
		if err != nil {
			t.Skipf("no IPv6 loopback: %v", err)
		}
		return ln
	}
	httpLn := listen()
	web := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	web.Listener.Close()
	web.Listener = httpLn
	web.Start()
	defer web.Close()
	wsLn := listen()
	startWS(t, wsLn)
	s, err := sample.Start(context.Background(), sample.Options{Build: sample.BuildA, DataDir: t.TempDir(), Blocks: 100, Work: 1, GRPCAddr: "[::1]:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, args := range [][]string{
		{web.URL + "/"},
		{web.URL + "/", "--rate", "200", "--connections", "2", "--duration", "200ms"},
		{"grpc://" + s.GRPCAddr() + "/tandem.sample.v1.Ledger/Ping"},
		{"ws://" + wsLn.Addr().String() + "/", "--jsonrpc", "ping"},
	} {
		if !strings.Contains(args[0], "://[::1]:") {
			t.Fatalf("target %s is not [::1]", args[0])
		}
		if !slices.Contains(args, "--duration") {
			args = append(args, "--requests", "20")
		}
		code, out, stderr := tandem(t, append(append([]string{"load"}, args...), "--timeout", "2s", "--format", "json")...)
		var got struct {
			Requests, OK int64
			Errors       map[string]int64
		}
		json.Unmarshal([]byte(out), &got)
		if code != exitOK || got.OK == 0 || got.OK != got.Requests || len(got.Errors) != 0 {
			t.Errorf("load %v: exit %d, %+v (%s); want every request ok", args, code, got, stderr)
		}
	}
}

// SIGINT or SIGTERM during tandem load, as a child process against a slow
// server: the run stops, the results so far are printed marked
// interrupted, and the exit status is 130 or 143 (it used to be 0, with no
// mark).
func TestLoadInterrupted(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, "slow")
	}))
	defer srv.Close()
	for _, c := range []struct {
		sig    syscall.Signal
		format string
		code   int
	}{
		{syscall.SIGINT, "json", 130},
		{syscall.SIGTERM, "text", 143},
		{syscall.SIGINT, "md", 130},
	} {
		t.Run(cli.SignalName(c.sig)+"/"+c.format, func(t *testing.T) {
			before := served.Load()
			cmd := exec.Command(os.Args[0], "load", srv.URL+"/", "--concurrency", "2", "--duration", "300s", "--timeout", "2s", "--format", c.format)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Signal once the run is under way (the checks before it done
			// and the signal handler installed), about 300 ms in.
			started := time.Now()
			for served.Load()-before < 5 || time.Since(started) < 300*time.Millisecond {
				if time.Since(started) > 3*time.Minute { // a child built with -race, on a busy machine
					cmd.Process.Kill()
					<-done
					t.Fatalf("the run did not start within 3 minutes; stderr:\n%s", errb.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Signal(c.sig)
			var err error
			select { // a hang guard: the signal stops the run at once, its 5 minutes are far off
			case err = <-done:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running 2 minutes after %v; stderr:\n%s", c.sig, errb.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != c.code {
				t.Fatalf("exit: %v; want status %d\nstderr: %s", err, c.code, errb.String())
			}
			switch c.format {
			case "json":
				var got struct {
					Requests, OK int64
					Interrupted  *bool
				}
				if err := json.Unmarshal(out.Bytes(), &got); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, out.String())
				}
				if got.Interrupted == nil || !*got.Interrupted || got.OK == 0 || got.Requests < got.OK {
					t.Errorf("results %+v; want interrupted true and the requests measured", got)
				}
			case "text":
				want := "INTERRUPTED: stopped by " + cli.SignalName(c.sig) + " after "
				if !strings.HasPrefix(out.String(), want) || !strings.Contains(out.String(), "requests ") {
					t.Errorf("report does not start with %q and give the requests:\n%s", want, out.String())
				}
			case "md":
				if !strings.HasPrefix(out.String(), "> **INTERRUPTED**: stopped by SIGINT") || !strings.Contains(out.String(), "| requests |") {
					t.Errorf("report is not marked interrupted:\n%s", out.String())
				}
			}
			if !strings.Contains(errb.String(), "tandem: stopped by "+cli.SignalName(c.sig)) {
				t.Errorf("stderr %q; want it to say what stopped the run", errb.String())
			}
		})
	}
}

// A run whose context is cancelled without a signal (an embedding caller)
// is interrupted too: status 130, results marked. It is cancelled once the
// load is under way: the server has seen the check before the run (one
// request) and two of the load's.
func TestLoadCancelledInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 3 {
			cancel()
		}
		time.Sleep(10 * time.Millisecond)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"load", srv.URL + "/", "--duration", "20s", "--timeout", "2s", "--format", "json"}, &out, &errb)
	var got struct{ Interrupted bool }
	json.Unmarshal(out.Bytes(), &got)
	if code != exitInterrupted || !got.Interrupted || !strings.Contains(errb.String(), "stopped by cancellation") {
		t.Errorf("exit %d, interrupted %v, stderr %q; want 130, true", code, got.Interrupted, errb.String())
	}
}

// The generator-busy warning reads the event loop's own thread where it ran
// (one core) and the process's CPU on the workers (all its cores), and
// stays quiet when the generator had room.
func TestDiagnoseBusyGenerator(t *testing.T) {
	sec := int64(time.Second)
	cores := time.Duration(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		name string
		s    results.Sample
		cpu  time.Duration
		want bool
	}{
		{"loop busy", results.Sample{DurationNs: sec, Engine: "loop", EngineCPUNs: sec * 95 / 100}, 0, true},
		{"loop with room", results.Sample{DurationNs: sec, Engine: "loop", EngineCPUNs: sec / 2}, 2 * cores * time.Second, false},
		{"workers busy", results.Sample{DurationNs: sec, Engine: "workers"}, cores * time.Second, true},
		{"workers with room", results.Sample{DurationNs: sec, Engine: "workers"}, cores * time.Second / 2, false},
	} {
		got := false
		for _, w := range finding.Generator(c.s, c.cpu, 1) {
			got = got || strings.Contains(w, "may have been the bottleneck")
		}
		if got != c.want {
			t.Errorf("%s: warned %v; want %v", c.name, got, c.want)
		}
	}
}

// tandem load holds its load to the bounds a study's scenario gets, in a
// study's words, before it sends anything; and a shape that sends nothing
// at all is refused, not run to "0 sent". (--rate 1e9 used to run until
// the kernel killed it for its memory.)
func TestLoadBounds(t *testing.T) {
	url, hits := countingServer(t)
	const perSecond = " (at most 10,000,000 arrivals per second in total)"
	const perRun = " (at most 1,000,000,000 arrivals per run: a lower rate or a shorter duration)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "1e9", "--connections", "1"}, "--rate 1e9: rate 1,000,000,000 exceeds tandem's limit" + perSecond},
		{[]string{"--rate", "100-2e7", "--duration", "5s"}, "--rate 100-2e7: ramp to 20,000,000 exceeds tandem's limit" + perSecond},
		{[]string{"--rate", "100,20000000", "--step", "1s"}, "--rate 100,20000000: rate 20,000,000 exceeds tandem's limit" + perSecond},
		{[]string{"--batch", "100000", "--connections", "200", "--duration", "2s"},
			"--batch 100000: 100000 per period of 1s on 200 connections is 20,000,000 per second, over tandem's limit" + perSecond},
		{[]string{"--rate", "5000000", "--duration", "10m"}, "--duration 10m0s: rate 5,000,000 for 10m0s: 3,000,000,000 arrivals per run, over tandem's limit" + perRun},
		{[]string{"--rate", "1000000,9000000", "--step", "2m"}, "--rate 1000000,9000000: 2 steps: 1,200,000,000 arrivals per run, over tandem's limit" + perRun},
		{[]string{"--requests", "2000000000"}, "--requests 2000000000: requests 2000000000 exceeds tandem's limit (at most 1,000,000,000 requests per run)"},
		{[]string{"--rate", "0-0", "--duration", "1s"}, `--rate: rate "0-0": a ramp from 0 to 0 sends nothing`},
		{[]string{"--rate", "0,0", "--duration", "1s"}, `--rate: rate "0,0": every step is 0, which sends nothing`},
		{[]string{"--rate", "0"}, `--rate: rate "0": want a positive rate`},
	} {
		code, stdout, stderr := tandem(t, append([]string{"load", url}, c.args...)...)
		if code != exitBadInput || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("load %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the target saw %d requests; want none: every load was refused before it", n)
	}
	// at the bounds, and with a pause among steps: accepted
	for _, args := range [][]string{
		{"--rate", "100,0,100", "--duration", "300ms"},
		{"--rate", "0-200", "--duration", "300ms"},
	} {
		if code, _, stderr := tandem(t, append([]string{"load", url, "--format", "json"}, args...)...); code != 0 {
			t.Errorf("load %v: exit %d, %s; want 0", args, code, stderr)
		}
	}
}

// SIGTERM stops tandem load at once even at the top rate on one
// connection, where nearly every arrival waits or is dropped, on either
// engine: exit 143, the results printed and marked, arrivals sent and
// dropped. (The workers engine used to skip arrivals for ever at such a
// rate, and so neither sent nor stopped until the schedule ended.)
func TestLoadTopRateStopsOnSIGTERM(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	for _, engine := range []string{"loop", "workers"} {
		t.Run(engine, func(t *testing.T) {
			before := served.Load()
			cmd := exec.Command(os.Args[0], "load", srv.URL+"/", "--rate", "10000000", "--connections", "1", "--duration", "90s", // 900,000,000 arrivals: under the limit of a run

				"--timeout", "1s", "--engine", engine, "--format", "json")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// signal once the run has sent (the checks before it take one
			// request), or after a minute all the same
			for waited := time.Duration(0); served.Load()-before < 100 && waited < time.Minute; waited += 10 * time.Millisecond {
				select {
				case err := <-done:
					t.Fatalf("exited before the signal: %v\n%s", err, errb.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
			cmd.Process.Signal(syscall.SIGTERM)
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute): // a hang guard; a run that ran to its end would exit 0, not 143
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running a minute after SIGTERM; stderr:\n%s", errb.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 143 {
				t.Fatalf("exit: %v; want status 143\nstderr: %s", err, errb.String())
			}
			var got struct {
				Requests, OK, Dropped int64
				Interrupted           bool
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out.String())
			}
			if !got.Interrupted || got.Requests <= 0 || got.OK > got.Requests || got.Requests > served.Load()-before || got.Dropped <= 0 {
				t.Errorf("results %+v (the server answered %d); want interrupted, requests sent and arrivals dropped", got, served.Load()-before)
			}
		})
	}
}

// --cpuprofile profiles the run once the target is reached and warm: a
// profile of a run, and no file at all for a target that cannot be reached.
func TestLoadCPUProfile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "pong") }))
	defer srv.Close()
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.pprof")
	if code, _, stderr := tandem(t, "load", srv.URL+"/", "--requests", "200", "--cpuprofile", prof, "--format", "json"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("the profile: %v; want a file with a profile in it", err)
	}
	none := filepath.Join(dir, "none.pprof")
	if code, _, _ := tandem(t, "load", "http://"+closedPort(t)+"/", "--requests", "20", "--cpuprofile", none); code != exitBadInput {
		t.Errorf("unreachable target: exit %d; want %d", code, exitBadInput)
	}
	if _, err := os.Stat(none); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unreachable target: the profile %v; want no file", err)
	}
}
