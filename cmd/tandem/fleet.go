package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/adhoc"
	"github.com/tandem-bench/tandem/fleet"
	"github.com/tandem-bench/tandem/internal/host"
	"github.com/tandem-bench/tandem/internal/k8sjob"
	"github.com/tandem-bench/tandem/load"
	"github.com/tandem-bench/tandem/report"
	"github.com/tandem-bench/tandem/results"
	"github.com/tandem-bench/tandem/runner"
	"github.com/tandem-bench/tandem/study"
)

// fleetOptions are the flags that spread tandem load over workers.
type fleetOptions struct {
	workers, localWorkers int
	nats, name, onLoss    string
	joinWait              time.Duration
	auth                  natsAuth
}

// active says the flags ask for a distributed run.
func (f fleetOptions) active() bool { return f.workers != 0 || f.localWorkers != 0 } // a negative count is refused by checkFleet

func fleetFlags(f *pflag.FlagSet, o *fleetOptions) {
	f.IntVar(&o.workers, "workers", 0, "spread the load over this many workers that join by themselves (tandem worker --nats URL, or a Kubernetes Job: tandem k8s job)")
	f.IntVar(&o.localWorkers, "local-workers", 0, "spread the load over this many worker processes started on this machine")
	f.StringVar(&o.nats, "nats", "", "with --workers or --local-workers: the NATS server the fleet meets on (default: one embedded in this process, on loopback)")
	f.StringVar(&o.name, "fleet", "tandem", "with --workers or --local-workers: the fleet's name; workers of another name are not taken")
	f.StringVar(&o.onLoss, "on-worker-loss", "fail", "with --workers or --local-workers: fail (stop the run) or continue (run to the end without it) when a worker is lost (silent for 10 s); either way tandem load exits 1, its figures missing the lost share")
	f.DurationVar(&o.joinWait, "join-wait", 2*time.Minute, "with --workers: how long to wait for the workers to join")
	natsAuthFlags(f, &o.auth)
}

// runFleet coordinates a distributed tandem load: it starts (or joins) a
// NATS server, starts the local workers, runs the coordinator and prints
// the tallies added up as tandem load prints one machine's run.
func runFleet(cmd *cobra.Command, target string, l *adhoc.Load, o loadOptions, stdout, stderr io.Writer) error {
	ctx := cmd.Context()
	fo := o.fleet
	if err := checkFleet(fo); err != nil {
		return badInput(err)
	}
	if o.cpuprofile != "" {
		return badInput(errors.New("--cpuprofile profiles this process: run it on one worker's load instead"))
	}
	n := max(fo.workers, fo.localWorkers)
	part, err := l.FleetPart(target)
	if err != nil {
		return badInput(err)
	}
	for i := range n { // refuse a split that leaves a worker nothing, before anything starts
		if _, _, err := part.Spec.Split(i, n); err != nil {
			return badInput(fmt.Errorf("%s: %w", o.ShareFlag(), err))
		}
	}
	spec, err := json.Marshal(part)
	if err != nil {
		return err
	}
	fl, err := startFleet(fo, n, stderr)
	if err != nil {
		return err
	}
	defer fl.stop()
	co := fl.coordinator(fo, n)
	co.Spec = spec
	out, runErr := co.Run(ctx)
	if out == nil {
		return badInput(fl.explain(runErr))
	}
	s, warnings := out.Sample(fl.where, fo.onLoss)
	if err := finish(ctx, stdout, o.format, report.SampleRun{Sample: s, Warnings: warnings}); err != nil {
		return err
	}
	if runErr != nil {
		return &exitError{exitCheckFailed, runErr}
	}
	// with --on-worker-loss continue too: the run went on, but what it
	// measured is not the load asked for (docs/distributed.md, Failures)
	if why := out.Failed(); why != "" && ctx.Err() == nil {
		return &exitError{exitCheckFailed, fmt.Errorf("the run is not whole: %s", why)}
	}
	return nil
}

// fleetConn is a fleet's NATS connection (and the embedded server, if
// any) and the local workers it started.
type fleetConn struct {
	nc     *nats.Conn
	where  string
	locals *localWorkers
	logf   func(string)
	stop   func()
}

// startFleet embeds a NATS server (or connects to --nats) and starts the
// local workers.
func startFleet(fo fleetOptions, n int, stderr io.Writer) (*fleetConn, error) {
	f := &fleetConn{logf: func(s string) { fmt.Fprintf(stderr, "tandem: fleet: %s\n", s) }}
	var stops []func()
	f.stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	natsURL := fo.nats
	f.where = "embedded"
	var e *fleet.Embedded
	if natsURL == "" {
		// the embedded server admits the NKeys it makes for this run only:
		// one per worker, each for that worker's subjects
		ids := make([]string, n)
		for i := range ids {
			ids[i] = workerSlot(fo, i)
		}
		var err error
		if e, err = fleet.Embed(fleet.EmbedOptions{Fleet: fo.name, Workers: ids}); err != nil {
			return nil, err
		}
		stops = append(stops, func() { e.Close() })
		natsURL = e.URL()
	} else if u, err := url.Parse(natsURL); err == nil && u.Host != "" {
		f.where = u.Host
	}
	var nc *nats.Conn
	var err error
	if e != nil {
		nc, err = e.Connect("tandem coordinator")
	} else {
		var opts []nats.Option
		if opts, err = fo.auth.options(); err != nil {
			f.stop()
			return nil, badInput(err)
		}
		nc, err = nats.Connect(natsURL, append(opts, nats.Name("tandem coordinator"))...)
	}
	if err != nil {
		f.stop()
		return nil, badInput(fmt.Errorf("--nats %s: %w", natsURL, err))
	}
	f.nc = nc
	stops = append(stops, nc.Close)
	switch {
	case fo.localWorkers > 0:
		if f.locals, err = startLocalWorkers(e, fo); err != nil {
			f.stop()
			return nil, err
		}
		stops = append(stops, f.locals.stop)
	case e != nil:
		// workers started by hand on this machine: each with its own key,
		// in a file only this user reads
		var cmds []string
		for i := range n {
			path, err := e.WriteWorkerSeed(workerSlot(fo, i))
			if err != nil {
				f.stop()
				return nil, err
			}
			cmds = append(cmds, fmt.Sprintf("  tandem worker --nats %s --fleet %s --id %s --nats-nkey %s", natsURL, fo.name, workerSlot(fo, i), path))
		}
		f.logf(fmt.Sprintf("waiting for %d workers on the embedded server; start each with its own key:\n%s", n, strings.Join(cmds, "\n")))
	default:
		f.logf(fmt.Sprintf("waiting for %d workers: tandem worker --nats %s --fleet %s", n, natsURL, fo.name))
	}
	return f, nil
}

// workerSlot is the id of the i-th worker the embedded server admits.
func workerSlot(fo fleetOptions, i int) string {
	if fo.localWorkers > 0 {
		return fmt.Sprintf("local-%d", i+1)
	}
	return fmt.Sprintf("worker-%d", i+1)
}

// coordinator is the fleet's coordinator for n workers.
func (f *fleetConn) coordinator(fo fleetOptions, n int) *fleet.Coordinator {
	return &fleet.Coordinator{Conn: f.nc, Fleet: fo.name, Workers: n, Version: version, JoinWait: fo.joinWait,
		ContinueOnLoss: fo.onLoss == "continue", Log: f.logf}
}

// explain adds what the local workers said to err.
func (f *fleetConn) explain(err error) error {
	if f.locals != nil {
		if tail := f.locals.stderr(); tail != "" {
			return fmt.Errorf("%w\nthe local workers said:\n%s", err, tail)
		}
	}
	return err
}

// checkFleet refuses fleet flags that cannot work.
func checkFleet(fo fleetOptions) error {
	if fo.nats != "" {
		if err := checkNATSURL(fo.nats); err != nil {
			return err
		}
	} else if fo.auth.set() {
		return errors.New("--nats-creds, --nats-nkey, --nats-ca, --nats-cert and --nats-key are for --nats: the embedded server makes its own keys")
	}
	switch {
	case fo.workers < 0 || fo.localWorkers < 0:
		return fmt.Errorf("--workers %d, --local-workers %d: want a positive count", fo.workers, fo.localWorkers)
	case fo.joinWait <= 0:
		return fmt.Errorf("--join-wait %v: want a positive duration", fo.joinWait)
	case fo.workers > 0 && fo.localWorkers > 0:
		return errors.New("--workers and --local-workers: choose one (--local-workers N starts N workers here)")
	case fo.onLoss != "fail" && fo.onLoss != "continue":
		return fmt.Errorf("--on-worker-loss %q: want fail or continue", fo.onLoss)
	case !validFleetName(fo.name):
		return fmt.Errorf("--fleet %q: want letters, digits, - and _", fo.name)
	}
	return nil
}

// checkStudyFleet refuses a study whose loops (those --only leaves) cannot
// be split over n workers: every level, and its warm-up, needs a client or
// connection per worker, and a request count a request per worker.
func checkStudyFleet(s *study.Study, only []string, n int) error {
	var errs []error
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		kind := s.Kind(sc)
		if sc.Sweep != nil || len(only) > 0 && !slices.Contains(only, sc.Name) ||
			kind != study.KindClosed && kind != study.KindOpen && kind != study.KindBatched {
			continue
		}
		levels := []int(sc.Load.Concurrency)
		if kind != study.KindClosed {
			levels = []int{max(sc.Load.Connections, 1)}
		}
		for _, c := range levels {
			whole := load.Spec{Kind: load.Kind(kind), Clients: c, Connections: c, Requests: sc.Requests}
			for index := range n {
				if _, _, err := whole.Split(index, n); err != nil {
					errs = append(errs, fmt.Errorf("scenario %s: %w", sc.Name, err))
					break
				}
			}
		}
	}
	if len(errs) > 0 {
		errs = append(errs, errors.New("raise them, run fewer workers, or leave those scenarios out with --only"))
	}
	return errors.Join(errs...)
}

// studyFleet runs a study's loops on a fleet session (runner.Fleet).
type studyFleet struct {
	sess   *fleet.Session
	where  string
	onLoss string
	// cancel stops the run when a worker is lost and the run fails;
	// lost says why.
	cancel context.CancelCauseFunc
	lost   error
}

// openStudyFleet starts the fleet of tandem run --workers and waits for
// its workers; stop ends it.
func openStudyFleet(ctx context.Context, fo fleetOptions, stderr io.Writer) (*studyFleet, func(), error) {
	if err := checkFleet(fo); err != nil {
		return nil, nil, badInput(err)
	}
	n := max(fo.workers, fo.localWorkers)
	fl, err := startFleet(fo, n, stderr)
	if err != nil {
		return nil, nil, err
	}
	sess, err := fl.coordinator(fo, n).Open(ctx)
	if err != nil {
		fl.stop()
		return nil, nil, badInput(fl.explain(err))
	}
	stop := func() { sess.Close(); fl.stop() }
	return &studyFleet{sess: sess, where: fl.where, onLoss: fo.onLoss}, stop, nil
}

// Load runs one part of the study on the fleet.
func (f *studyFleet) Load(ctx context.Context, p runner.FleetPart) (results.Sample, error) {
	spec, err := json.Marshal(p)
	if err != nil {
		return results.Sample{}, err
	}
	out, err := f.sess.Run(ctx, spec)
	if errors.Is(err, fleet.ErrWorkerLost) && f.lost == nil {
		f.lost = err
		f.cancel(err)
	}
	if out == nil {
		return results.Sample{}, err
	}
	s, _ := out.Sample(f.where, f.onLoss)
	if why := out.Failed(); err == nil && why != "" && ctx.Err() == nil {
		err = fmt.Errorf("the fleet's run is not whole: %s", why) // the round fails: its load was not what was asked
	}
	return s, err
}

func validFleetName(s string) bool { return k8sjob.ValidName.MatchString(s) }

// notInName is what a hostname has that a worker id may not.
var notInName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// localWorkers are worker processes started on this machine. Each
// writes its standard error to a file of its own, not a pipe: a worker
// must outlive its coordinator by its lease, and a write to a pipe nobody
// reads any more would kill it at once.
type localWorkers struct {
	cmds []*exec.Cmd
	logs []*os.File
	done []chan struct{}
}

// workerLogPrefix names a local worker's log in the system's temporary
// directory; one a killed coordinator left is removed by the next.
const workerLogPrefix = "tandem-worker-"

// startLocalWorkers starts fo.localWorkers tandem worker processes of this
// binary against the embedded server e (nil: --nats), each given its NKey
// seed through its environment.
func startLocalWorkers(e *fleet.Embedded, fo fleetOptions) (*localWorkers, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--local-workers: %w", err)
	}
	host.RemoveStale(os.TempDir(), workerLogPrefix, ".log") // of a coordinator killed before it cleaned up
	natsURL := fo.nats
	if e != nil {
		natsURL = e.URL()
	}
	lw := &localWorkers{}
	for i := range fo.localWorkers {
		log, err := os.CreateTemp("", host.StaleName(workerLogPrefix)+"*.log")
		if err != nil {
			lw.stop()
			return nil, fmt.Errorf("--local-workers: %w", err)
		}
		lw.logs = append(lw.logs, log)
		id := workerSlot(fo, i)
		args := []string{"worker", "--nats", natsURL, "--fleet", fo.name, "--id", id, "--wait", "1m"}
		for _, fl := range []struct{ name, v string }{{"nats-creds", fo.auth.creds}, {"nats-nkey", fo.auth.nkey}, {"nats-ca", fo.auth.ca},
			{"nats-cert", fo.auth.cert}, {"nats-key", fo.auth.key}} {
			if fl.v != "" { // paths, not secrets
				args = append(args, "--"+fl.name, fl.v)
			}
		}
		c := exec.Command(self, args...)
		c.Env = os.Environ()
		if e != nil {
			seed, _ := e.WorkerSeed(id)
			c.Env = append(c.Env, nkeyEnv+"="+string(seed))
		}
		c.Stderr, c.Stdout = log, nil
		if err := c.Start(); err != nil {
			lw.stop()
			return nil, fmt.Errorf("--local-workers: start worker %d: %w", i+1, err)
		}
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		lw.cmds, lw.done = append(lw.cmds, c), append(lw.done, done)
	}
	return lw, nil
}

// stop waits a little for the workers to end by themselves (they do once
// their last tally is delivered), kills the rest and removes their logs.
func (lw *localWorkers) stop() {
	deadline := time.After(5 * time.Second)
	for i, done := range lw.done {
		select {
		case <-done:
		case <-deadline:
			lw.cmds[i].Process.Kill()
			<-done
		}
	}
	for _, f := range lw.logs {
		f.Close()
		os.Remove(f.Name())
	}
}

// stderr is what the workers wrote to their standard error.
func (lw *localWorkers) stderr() string {
	var b strings.Builder
	for i, f := range lw.logs {
		data, _ := os.ReadFile(f.Name())
		if s := strings.TrimSpace(string(data)); s != "" {
			fmt.Fprintf(&b, "local-%d: %s\n", i+1, s)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// workerCmd is tandem worker: it joins a fleet and runs its part of the
// next distributed load.
func workerCmd(stderr io.Writer) *cobra.Command {
	var natsURL, name, id string
	var wait time.Duration
	var auth natsAuth
	c := &cobra.Command{
		Use:   "worker",
		Short: "Join a fleet and run a share of a distributed tandem load",
		Long: `worker connects to NATS, joins the coordinator of its fleet (tandem load
--workers N, or --local-workers N), runs its share of the load and streams
what it measures. It serves one run and exits: 0 when its part ran to its
end, 1 when the coordinator stopped it or it lost the coordinator (it stops
its load by itself within 4 s of silence), 2 when it could not join.

Its id defaults to worker-$JOB_COMPLETION_INDEX in a Kubernetes Indexed Job
(tandem k8s job prints one), else HOST-PID.`,
		Example: "  tandem worker --nats nats://10.0.0.5:4222\n  tandem worker --nats nats://nats.load:4222 --fleet nightly --id gen-3",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if natsURL == "" {
				return badInput(errors.New("--nats: the URL of the NATS server the fleet meets on"))
			}
			if !validFleetName(name) {
				return badInput(fmt.Errorf("--fleet %q: want letters, digits, - and _", name))
			}
			if runtime.GOMAXPROCS(0) < 2 {
				runtime.GOMAXPROCS(2) // a P for an open loop's waits, or the event loop's, beside the rest (see load.Open)
			}
			hostname, _ := os.Hostname()
			if h := os.Getenv("TANDEM_WORKER_HOST"); h != "" { // a Kubernetes pod's node
				hostname = h
			}
			if id == "" {
				id = defaultWorkerID(hostname)
			}
			if !validFleetName(id) {
				return badInput(fmt.Errorf("--id %q: want letters, digits, - and _", id))
			}
			if err := checkNATSURL(natsURL); err != nil {
				return badInput(err)
			}
			opts, err := workerNATSOptions(id, auth)
			if err != nil {
				return badInput(err)
			}
			nc, err := nats.Connect(natsURL, append(opts, nats.Name("tandem worker "+id), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))...)
			if err != nil {
				return badInput(fmt.Errorf("--nats %s: %w", natsURL, err))
			}
			defer nc.Close()
			w := &fleet.Worker{Conn: nc, Fleet: name, ID: id, Host: hostname, Version: version, Wait: wait, Job: runner.FleetJob,
				Log: func(s string) { fmt.Fprintf(stderr, "tandem: worker %s: %s\n", id, s) }}
			err = w.Run(cmd.Context())
			switch {
			case err == nil:
				return nil
			case errors.Is(err, fleet.ErrRefused):
				return badInput(err)
			}
			return &exitError{exitCheckFailed, err}
		},
	}
	f := c.Flags()
	f.StringVar(&natsURL, "nats", "", "the NATS server the fleet meets on (required)")
	f.StringVar(&name, "fleet", "tandem", "the fleet to join")
	f.StringVar(&id, "id", "", "this worker's name, unique in the run (default worker-$JOB_COMPLETION_INDEX, else HOST-PID)")
	f.DurationVar(&wait, "wait", 10*time.Minute, "how long to wait for a coordinator to take this worker")
	natsAuthFlags(f, &auth)
	return c
}

// defaultWorkerID is worker-INDEX in a Kubernetes Indexed Job, else
// HOST-PID.
func defaultWorkerID(hostname string) string {
	if i := os.Getenv("JOB_COMPLETION_INDEX"); i != "" {
		return "worker-" + i
	}
	h := notInName.ReplaceAllString(hostname, "-")
	if h == "" {
		h = "worker"
	}
	return fmt.Sprintf("%s-%d", h, os.Getpid())
}
