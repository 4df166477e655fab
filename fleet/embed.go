package fleet

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Embedded is a NATS server with JetStream inside this process, on
// loopback at a random port, storing into a temporary directory of its
// own: the default for a run whose workers are on this machine.
type Embedded struct {
	srv *server.Server
	dir string
}

// Embed starts an embedded NATS server on host (loopback when empty) at a
// random port.
func Embed(host string) (*Embedded, error) {
	if host == "" {
		host = "127.0.0.1"
	}
	dir, err := os.MkdirTemp("", "tandem-nats-")
	if err != nil {
		return nil, fmt.Errorf("fleet: embedded NATS: %w", err)
	}
	srv, err := server.NewServer(&server.Options{
		ServerName: "tandem", Host: host, Port: server.RANDOM_PORT, JetStream: true, StoreDir: dir,
		NoSigs: true, NoLog: true, MaxPayload: 8 << 20,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("fleet: embedded NATS: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		os.RemoveAll(dir)
		return nil, errors.New("fleet: embedded NATS did not start within 10 s")
	}
	return &Embedded{srv: srv, dir: dir}, nil
}

// URL is the server's client URL (nats://127.0.0.1:PORT).
func (e *Embedded) URL() string { return e.srv.ClientURL() }

// Close stops the server and removes its storage.
func (e *Embedded) Close() error {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
	return os.RemoveAll(e.dir)
}
