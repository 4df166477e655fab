package fleet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/tandem-bench/tandem/internal/host"
)

// EmbedOptions say where an embedded server listens and who may use it.
type EmbedOptions struct {
	// Host is the address it listens on (loopback when empty).
	Host string
	// Fleet names the fleet ("tandem" when empty): workers may use its
	// subjects only.
	Fleet string
	// Workers are the ids of the workers that may connect, each with an
	// NKey of its own and the permissions of that id only.
	Workers []string
}

// Embedded is a NATS server with JetStream inside this process, at a
// random port, storing into a private temporary directory of its own:
// the default for a run whose workers are on this machine. It admits only
// the NKeys it made for this run: the coordinator's (every subject) and
// one per worker (that worker's subjects): nobody else on the machine can
// connect, read an assignment or send a tally.
type Embedded struct {
	srv   *server.Server
	dir   string
	coord []byte
	seeds map[string][]byte
}

// tempPrefix names the embedded server's directory in the system's
// temporary directory; one a killed coordinator left is removed by the
// next (host.RemoveStale).
const tempPrefix = "tandem-nats-"

// Embed starts an embedded NATS server at a random port, with a fresh
// NKey for the coordinator and for each of o.Workers.
func Embed(o EmbedOptions) (*Embedded, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Fleet == "" {
		o.Fleet = "tandem"
	}
	host.RemoveStale(os.TempDir(), tempPrefix, "") // of a coordinator killed before it cleaned up
	dir, err := os.MkdirTemp("", host.StaleName(tempPrefix)+"*")
	if err != nil {
		return nil, fmt.Errorf("fleet: embedded NATS: %w", err)
	}
	e := &Embedded{dir: dir, seeds: map[string][]byte{}}
	fail := func(err error) (*Embedded, error) {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("fleet: embedded NATS: %w", err)
	}
	var users []*server.NkeyUser
	add := func(perms *server.Permissions) ([]byte, error) {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, err
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, err
		}
		users = append(users, &server.NkeyUser{Nkey: pub, Permissions: perms})
		return kp.Seed()
	}
	if e.coord, err = add(nil); err != nil {
		return fail(err)
	}
	for _, id := range o.Workers {
		if _, dup := e.seeds[id]; dup {
			return fail(fmt.Errorf("worker %s named twice", id))
		}
		if e.seeds[id], err = add(workerPermissions(o.Fleet, id)); err != nil {
			return fail(err)
		}
	}
	srv, err := server.NewServer(&server.Options{
		ServerName: "tandem", Host: o.Host, Port: server.RANDOM_PORT, JetStream: true, StoreDir: filepath.Join(dir, "jetstream"),
		NoSigs: true, NoLog: true, MaxPayload: 8 << 20, Nkeys: users, NoAuthUser: "",
	})
	if err != nil {
		return fail(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return fail(errors.New("did not start within 10 s"))
	}
	e.srv = srv
	return e, nil
}

// URL is the server's client URL (nats://127.0.0.1:PORT); it carries no
// credentials.
func (e *Embedded) URL() string { return e.srv.ClientURL() }

// Connect connects to the server as the coordinator.
func (e *Embedded) Connect(name string, opts ...nats.Option) (*nats.Conn, error) {
	auth, err := NkeyOption(e.coord)
	if err != nil {
		return nil, err
	}
	return nats.Connect(e.URL(), append([]nats.Option{nats.Name(name), auth}, opts...)...)
}

// CoordinatorSeed is the NKey seed of the coordinator's user (every
// subject), for a coordinator in another process.
func (e *Embedded) CoordinatorSeed() []byte { return e.coord }

// WorkerSeed is the NKey seed of worker id, for that worker only (pass it
// in a 0600 file or the environment, never on a command line).
func (e *Embedded) WorkerSeed(id string) ([]byte, bool) {
	s, ok := e.seeds[id]
	return s, ok
}

// WriteWorkerSeed writes worker id's seed to a file only this user can
// read, in the server's private directory, and returns its path.
func (e *Embedded) WriteWorkerSeed(id string) (string, error) {
	seed, ok := e.seeds[id]
	if !ok {
		return "", fmt.Errorf("fleet: no worker %s on this server", id)
	}
	path := filepath.Join(e.dir, id+".nk")
	if err := os.WriteFile(path, append(seed, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("fleet: %w", err)
	}
	return path, nil
}

// Close stops the server and removes its storage and seeds.
func (e *Embedded) Close() error {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
	return os.RemoveAll(e.dir)
}
