package driver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/tandem-bench/tandem/driver/grpcdrv"
	"github.com/tandem-bench/tandem/load"
)

// TargetURL parses a load target and checks its port, if it names one.
// Its errors do not repeat the target, which may hold a password.
func TargetURL(target string) (*url.URL, error) {
	u, err := url.Parse(target)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("target: %w", err)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("target %s: port %s: want 1 to 65535", u.Redacted(), p)
		}
	}
	return u, nil
}

// endpoint is the host:port the target u connects to.
func endpoint(u *url.URL) (string, error) {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "ws": "80", "https": "443", "wss": "443"}[u.Scheme]
		if port == "" {
			return "", fmt.Errorf("target %s: no port: want %s://HOST:PORT/…", u.Redacted(), u.Scheme)
		}
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// unreachable is a target whose host did not resolve or that refused or
// did not take a connection.
type unreachable struct {
	target string // the URL, if the message is to name it
	addr   string // host:port
	err    error
}

func (e *unreachable) Error() string {
	if e.target != "" {
		return "cannot reach " + e.target + ": " + e.addr + ": " + e.reason()
	}
	return "cannot reach " + e.addr + ": " + e.reason()
}

func (e *unreachable) Unwrap() error { return e.err }

// reason says why, in a few words: "connection refused".
func (e *unreachable) reason() string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(e.err, &dns):
		return "cannot resolve " + dns.Name + ": " + dns.Err
	case errors.Is(e.err, syscall.ECONNREFUSED):
		return "connection refused"
	case load.TransportStatus(e.err) == "timeout":
		return "no connection within " + ReachTimeout.String()
	case errors.As(e.err, &op) && op.Err != nil:
		return op.Err.Error() // "connect: network is unreachable"
	}
	return e.err.Error()
}

// reach resolves addr's host and opens one TCP connection to it.
func reach(ctx context.Context, addr string) error {
	c, err := (&net.Dialer{Timeout: ReachTimeout}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return &unreachable{addr: addr, err: err}
	}
	c.Close()
	return nil
}

// ReachTimeout bounds the reachability check's connection.
const ReachTimeout = 2 * time.Second

// Preflight checks the target u before the run, so an unreachable target
// or a TLS mismatch is one clear error, not a run of failures: it resolves
// the host and opens one TCP connection (for at most ReachTimeout), then
// sends one request. Everything else (statuses the target chose, garbage,
// resets, timeouts) is what the run is there to measure, and passes.
func Preflight(ctx context.Context, u *url.URL, d load.Dialer, timeout time.Duration) error {
	target := u.Redacted()
	addr, err := endpoint(u)
	if err != nil {
		return err
	}
	if err := reach(ctx, addr); err != nil {
		if u.Scheme == "http" || u.Scheme == "https" { // these connect on the first request
			return fmt.Errorf("cannot use %s: the first request failed: %s (%w)", target, load.TransportStatus(err), err)
		}
		var ur *unreachable
		if errors.As(err, &ur) {
			ur.target = target
		}
		return err
	}
	cn, err := d.Dial(ctx)
	if err != nil {
		var nr *grpcdrv.NoReflectionError
		if errors.As(err, &nr) { // it answered: reached, not usable as given
			return fmt.Errorf("cannot use %s: %w", target, err)
		}
		return fmt.Errorf("cannot reach %s: %w", target, err)
	}
	defer cn.Close()
	res := cn.Do(ctx, 0, time.Now().Add(timeout)) // request 0, as the run's first
	switch res.Status {
	case "refused", "tls":
		return fmt.Errorf("cannot use %s: the first request failed: %s", target, res.Status)
	}
	return nil
}

// Unit is the unit of work of a load on d: message where d calls a server
// stream (its work is the messages it streams), else request.
func Unit(d load.Dialer) string {
	if s, ok := d.(interface{ Streaming() bool }); ok && s.Streaming() {
		return "message"
	}
	return "request"
}
