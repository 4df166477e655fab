package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/tandem-bench/tandem/internal/host"
	"github.com/tandem-bench/tandem/internal/k8sjob"
)

// Options say where a command's fleet meets and who is in it: Workers
// that join by themselves, or LocalWorkers this process starts; the NATS
// server (empty: one embedded in this process), the fleet's Name, what a
// lost worker does (OnLoss: fail or continue), how long to wait for the
// workers to join, and the credentials for NATS. Errors name each option
// by its command-line flag.
type Options struct {
	Workers, LocalWorkers int
	NATS, Name, OnLoss    string
	JoinWait              time.Duration
	Auth                  Auth
}

// Active says the options ask for a distributed run.
func (o Options) Active() bool { return o.Workers != 0 || o.LocalWorkers != 0 } // a negative count is refused by Check

// Count is the number of workers the options ask for.
func (o Options) Count() int { return max(o.Workers, o.LocalWorkers) }

// Check refuses options that cannot work.
func (o Options) Check() error {
	if o.NATS != "" {
		if err := CheckURL(o.NATS); err != nil {
			return err
		}
		if _, err := o.Auth.NATSOptions(); err != nil {
			return err
		}
	} else if o.Auth.Set() {
		return errors.New("--nats-creds, --nats-nkey, --nats-ca, --nats-cert and --nats-key are for --nats: the embedded server makes its own keys")
	}
	switch {
	case o.Workers < 0 || o.LocalWorkers < 0:
		return fmt.Errorf("--workers %d, --local-workers %d: want a positive count", o.Workers, o.LocalWorkers)
	case o.JoinWait <= 0:
		return fmt.Errorf("--join-wait %v: want a positive duration", o.JoinWait)
	case o.Workers > 0 && o.LocalWorkers > 0:
		return errors.New("--workers and --local-workers: choose one (--local-workers N starts N workers here)")
	case o.OnLoss != "fail" && o.OnLoss != "continue":
		return fmt.Errorf("--on-worker-loss %q: want fail or continue", o.OnLoss)
	case !ValidName(o.Name):
		return fmt.Errorf("--fleet %q: want letters, digits, - and _", o.Name)
	}
	return nil
}

// ValidName says s may name a fleet or a worker: letters, digits, - and _.
func ValidName(s string) bool { return k8sjob.ValidName.MatchString(s) }

// ServerError is why Meet failed when the NATS server could not be
// reached or refused the credentials.
type ServerError struct{ Err error }

func (e *ServerError) Error() string { return e.Err.Error() }

// Unwrap is the reason.
func (e *ServerError) Unwrap() error { return e.Err }

// Meeting is a command's fleet: its NATS connection (and the embedded
// server, if any) and the local workers it started. Close ends it.
type Meeting struct {
	// Conn is the coordinator's connection; Where says where the fleet
	// met (embedded, or the server's host).
	Conn   *nats.Conn
	Where  string
	o      Options
	locals *localWorkers
	logf   func(string)
	stop   func()
}

// Meet embeds a NATS server (or connects to o.NATS) for o.Count()
// workers, starts the local workers (this executable's tandem worker) and
// says on logf how the others are to join.
func Meet(o Options, logf func(string)) (*Meeting, error) {
	fo, n := o, o.Count()
	f := &Meeting{o: o, logf: logf}
	var stops []func()
	f.stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	natsURL := fo.NATS
	f.Where = "embedded"
	var e *Embedded
	if natsURL == "" {
		// the embedded server admits the NKeys it makes for this run only:
		// one per worker, each for that worker's subjects
		ids := make([]string, n)
		for i := range ids {
			ids[i] = workerSlot(fo, i)
		}
		var err error
		if e, err = Embed(EmbedOptions{Fleet: fo.Name, Workers: ids}); err != nil {
			return nil, err
		}
		stops = append(stops, func() { e.Close() })
		natsURL = e.URL()
	} else if u, err := url.Parse(natsURL); err == nil && u.Host != "" {
		f.Where = u.Host
	}
	var nc *nats.Conn
	var err error
	if e != nil {
		nc, err = e.Connect("tandem coordinator")
	} else {
		var opts []nats.Option
		if opts, err = fo.Auth.NATSOptions(); err != nil {
			f.stop()
			return nil, err
		}
		nc, err = nats.Connect(natsURL, append(opts, nats.Name("tandem coordinator"))...)
	}
	if err != nil {
		f.stop()
		return nil, &ServerError{fmt.Errorf("--nats %s: %w", natsURL, err)}
	}
	f.Conn = nc
	stops = append(stops, nc.Close)
	switch {
	case fo.LocalWorkers > 0:
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
			cmds = append(cmds, fmt.Sprintf("  tandem worker --nats %s --fleet %s --id %s --nats-nkey %s", natsURL, fo.Name, workerSlot(fo, i), path))
		}
		f.logf(fmt.Sprintf("waiting for %d workers on the embedded server; start each with its own key:\n%s", n, strings.Join(cmds, "\n")))
	default:
		f.logf(fmt.Sprintf("waiting for %d workers: tandem worker --nats %s --fleet %s", n, natsURL, fo.Name))
	}
	return f, nil
}

// workerSlot is the id of the i-th worker the embedded server admits.
func workerSlot(fo Options, i int) string {
	if fo.LocalWorkers > 0 {
		return fmt.Sprintf("local-%d", i+1)
	}
	return fmt.Sprintf("worker-%d", i+1)
}

// Coordinator is the fleet's coordinator of version (the workers must
// run the same).
func (f *Meeting) Coordinator(version string) *Coordinator {
	return &Coordinator{Conn: f.Conn, Fleet: f.o.Name, Workers: f.o.Count(), Version: version, JoinWait: f.o.JoinWait,
		ContinueOnLoss: f.o.OnLoss == "continue", Log: f.logf}
}

// Close ends the meeting: the local workers, the connection, the embedded
// server.
func (f *Meeting) Close() { f.stop() }

// Explain adds what the local workers said to err.
func (f *Meeting) Explain(err error) error {
	if f.locals != nil {
		if tail := f.locals.stderr(); tail != "" {
			return fmt.Errorf("%w\nthe local workers said:\n%s", err, tail)
		}
	}
	return err
}

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

// startLocalWorkers starts fo.LocalWorkers tandem worker processes of this
// binary against the embedded server e (nil: --nats), each given its NKey
// seed through its environment.
func startLocalWorkers(e *Embedded, fo Options) (*localWorkers, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--local-workers: %w", err)
	}
	host.RemoveStale(os.TempDir(), workerLogPrefix, ".log") // of a coordinator killed before it cleaned up
	natsURL := fo.NATS
	if e != nil {
		natsURL = e.URL()
	}
	lw := &localWorkers{}
	for i := range fo.LocalWorkers {
		log, err := os.CreateTemp("", host.StaleName(workerLogPrefix)+"*.log")
		if err != nil {
			lw.stop()
			return nil, fmt.Errorf("--local-workers: %w", err)
		}
		lw.logs = append(lw.logs, log)
		id := workerSlot(fo, i)
		args := []string{"worker", "--nats", natsURL, "--fleet", fo.Name, "--id", id, "--wait", "1m"}
		for _, fl := range []struct{ name, v string }{{"nats-creds", fo.Auth.Creds}, {"nats-nkey", fo.Auth.NKey}, {"nats-ca", fo.Auth.CA},
			{"nats-cert", fo.Auth.Cert}, {"nats-key", fo.Auth.Key}} {
			if fl.v != "" { // paths, not secrets
				args = append(args, "--"+fl.name, fl.v)
			}
		}
		c := exec.Command(self, args...)
		c.Env = os.Environ()
		if e != nil {
			seed, _ := e.WorkerSeed(id)
			c.Env = append(c.Env, NKeyEnv+"="+string(seed))
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

// JoinOptions say which fleet a worker joins and how: the NATS server,
// the fleet's name, the worker's ID (empty: worker-$JOB_COMPLETION_INDEX
// in a Kubernetes Indexed Job, else HOST-PID), how long to wait for a
// coordinator, and the credentials.
type JoinOptions struct {
	NATS, Name, ID string
	Wait           time.Duration
	Auth           Auth
}

// JoinError is why Join refused its options or could not reach NATS.
type JoinError struct{ Err error }

func (e *JoinError) Error() string { return e.Err.Error() }

// Unwrap is the reason.
func (e *JoinError) Unwrap() error { return e.Err }

// Join connects to NATS as a worker of version, joins the fleet's next
// run, runs its part with job and returns when it is over (see
// Worker.Run). Its host is the machine's name, or TANDEM_WORKER_HOST (a
// Kubernetes pod's node). A *JoinError is the options'; ErrRefused, the
// coordinator's.
func Join(ctx context.Context, o JoinOptions, version string, job Job, logf func(id, s string)) error {
	if o.NATS == "" {
		return &JoinError{errors.New("--nats: the URL of the NATS server the fleet meets on")}
	}
	if !ValidName(o.Name) {
		return &JoinError{fmt.Errorf("--fleet %q: want letters, digits, - and _", o.Name)}
	}
	hostname, _ := os.Hostname()
	if h := os.Getenv("TANDEM_WORKER_HOST"); h != "" { // a Kubernetes pod's node
		hostname = h
	}
	id := o.ID
	if id == "" {
		id = defaultWorkerID(hostname)
	}
	if !ValidName(id) {
		return &JoinError{fmt.Errorf("--id %q: want letters, digits, - and _", id)}
	}
	if err := CheckURL(o.NATS); err != nil {
		return &JoinError{err}
	}
	opts, err := WorkerConnOptions(id, o.Auth)
	if err != nil {
		return &JoinError{err}
	}
	nc, err := nats.Connect(o.NATS, append(opts, nats.Name("tandem worker "+id), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))...)
	if err != nil {
		return &JoinError{fmt.Errorf("--nats %s: %w", o.NATS, err)}
	}
	defer nc.Close()
	w := &Worker{Conn: nc, Fleet: o.Name, ID: id, Host: hostname, Version: version, Wait: o.Wait, Job: job,
		Log: func(s string) { logf(id, s) }}
	return w.Run(ctx)
}

// notInName is what a hostname has that a worker id may not.
var notInName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

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
