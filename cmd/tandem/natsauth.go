package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/spf13/pflag"
	"github.com/tandem-bench/tandem/fleet"
)

// nkeyEnv carries a worker's NKey seed from the coordinator that started
// it (--local-workers): the environment, which only its user can read,
// never the command line.
const nkeyEnv = "TANDEM_NATS_NKEY"

// natsAuth are the flags that authenticate to a NATS server and check
// its certificate.
type natsAuth struct {
	creds, nkey, ca, cert, key string
}

func natsAuthFlags(f *pflag.FlagSet, a *natsAuth) {
	f.StringVar(&a.creds, "nats-creds", "", "with --nats: a NATS credentials file (user JWT and NKey seed)")
	f.StringVar(&a.nkey, "nats-nkey", "", "with --nats: a file holding an NKey seed to authenticate with")
	f.StringVar(&a.ca, "nats-ca", "", "with --nats: the CA certificate(s) to check the server's TLS certificate against (PEM)")
	f.StringVar(&a.cert, "nats-cert", "", "with --nats: a client certificate for TLS (PEM; with --nats-key)")
	f.StringVar(&a.key, "nats-key", "", "with --nats: the client certificate's private key (PEM)")
}

// set says any of the flags is given.
func (a natsAuth) set() bool {
	return a.creds != "" || a.nkey != "" || a.ca != "" || a.cert != "" || a.key != ""
}

// options are the NATS options the flags ask for.
func (a natsAuth) options() ([]nats.Option, error) {
	var opts []nats.Option
	if a.creds != "" && a.nkey != "" {
		return nil, errors.New("--nats-creds and --nats-nkey: choose one")
	}
	if (a.cert == "") != (a.key == "") {
		return nil, errors.New("--nats-cert and --nats-key go together")
	}
	for _, f := range []struct{ flag, path string }{{"--nats-creds", a.creds}, {"--nats-nkey", a.nkey}, {"--nats-ca", a.ca},
		{"--nats-cert", a.cert}, {"--nats-key", a.key}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return nil, fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	if a.creds != "" {
		opts = append(opts, nats.UserCredentials(a.creds))
	}
	if a.nkey != "" {
		o, err := nats.NkeyOptionFromSeed(a.nkey)
		if err != nil {
			return nil, fmt.Errorf("--nats-nkey %s: %w", a.nkey, err)
		}
		opts = append(opts, o)
	}
	if a.ca != "" {
		opts = append(opts, nats.RootCAs(a.ca))
	}
	if a.cert != "" {
		opts = append(opts, nats.ClientCert(a.cert, a.key))
	}
	return opts, nil
}

// checkNATSURL refuses a --nats URL that carries credentials: a command
// line is readable by every user of the machine (ps, /proc).
func checkNATSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("--nats: %w", err)
	}
	if u.User != nil {
		return errors.New("--nats: a URL with a user or password puts a secret on the command line, where every user of the machine reads it: " +
			"give the credentials in a file (--nats-creds FILE or --nats-nkey FILE)")
	}
	return nil
}

// workerNATSOptions are the options of tandem worker's connection: its
// own inbox, and credentials from its flags or from the coordinator that
// started it (the environment, read once and cleared).
func workerNATSOptions(id string, a natsAuth) ([]nats.Option, error) {
	opts := fleet.WorkerOptions(id)
	seed := os.Getenv(nkeyEnv)
	os.Unsetenv(nkeyEnv)
	if seed != "" && (a.creds != "" || a.nkey != "") {
		return nil, fmt.Errorf("%s and --nats-creds or --nats-nkey: choose one", nkeyEnv)
	}
	if seed != "" {
		o, err := fleet.NkeyOption([]byte(seed))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nkeyEnv, err)
		}
		opts = append(opts, o)
	}
	more, err := a.options()
	return append(opts, more...), err
}
