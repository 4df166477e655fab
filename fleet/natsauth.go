package fleet

import (
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/nats-io/nats.go"
)

// NKeyEnv carries a worker's NKey seed from the coordinator that started
// it (local workers): the environment, which only its user can read,
// never the command line.
const NKeyEnv = "TANDEM_NATS_NKEY"

// Auth are the files that authenticate to a NATS server and check its
// certificate: a credentials file or an NKey seed, a CA, a client
// certificate and its key.
type Auth struct {
	Creds, NKey, CA, Cert, Key string
}

// Set says any of the files is given.
func (a Auth) Set() bool {
	return a.Creds != "" || a.NKey != "" || a.CA != "" || a.Cert != "" || a.Key != ""
}

// NATSOptions are the NATS options the files ask for.
func (a Auth) NATSOptions() ([]nats.Option, error) {
	var opts []nats.Option
	if a.Creds != "" && a.NKey != "" {
		return nil, errors.New("--nats-creds and --nats-nkey: choose one")
	}
	if (a.Cert == "") != (a.Key == "") {
		return nil, errors.New("--nats-cert and --nats-key go together")
	}
	for _, f := range []struct{ flag, path string }{{"--nats-creds", a.Creds}, {"--nats-nkey", a.NKey}, {"--nats-ca", a.CA},
		{"--nats-cert", a.Cert}, {"--nats-key", a.Key}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return nil, fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	if a.Creds != "" {
		opts = append(opts, nats.UserCredentials(a.Creds))
	}
	if a.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(a.NKey)
		if err != nil {
			return nil, fmt.Errorf("--nats-nkey %s: %w", a.NKey, err)
		}
		opts = append(opts, o)
	}
	if a.CA != "" {
		opts = append(opts, nats.RootCAs(a.CA))
	}
	if a.Cert != "" {
		opts = append(opts, nats.ClientCert(a.Cert, a.Key))
	}
	return opts, nil
}

// CheckURL refuses a --nats URL that carries credentials: a command
// line is readable by every user of the machine (ps, /proc).
func CheckURL(raw string) error {
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

// WorkerConnOptions are the options of a worker's connection: its own
// inbox, and credentials from a or from the coordinator that started it
// (the environment, read once and cleared).
func WorkerConnOptions(id string, a Auth) ([]nats.Option, error) {
	opts := WorkerOptions(id)
	seed := os.Getenv(NKeyEnv)
	os.Unsetenv(NKeyEnv)
	if seed != "" && (a.Creds != "" || a.NKey != "") {
		return nil, fmt.Errorf("%s and --nats-creds or --nats-nkey: choose one", NKeyEnv)
	}
	if seed != "" {
		o, err := NkeyOption([]byte(seed))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", NKeyEnv, err)
		}
		opts = append(opts, o)
	}
	more, err := a.NATSOptions()
	return append(opts, more...), err
}
