package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// A fleet's messages are sealed end to end: each worker and the
// coordinator make a curve key pair for the run (nkeys' xkeys, NaCl box:
// X25519, XSalsa20-Poly1305) and trade the public halves in the join. What
// goes to one worker (its clock's answer aside: the assignment with its
// target and credentials, the start) is sealed to that worker; what a
// worker sends (clock readings, readiness, heartbeats, tallies) is sealed
// by it to the coordinator, so a message on a worker's subjects that does
// not open with that worker's key is a forgery, counted and fatal to the
// run. Someone on the bus sees who talks when, not what; a forger is
// caught, not counted. The broadcasts (the coordinator's heartbeat, stop
// and done) are not sealed: on a shared bus a party that may publish on
// the fleet's subjects can stop a run, never change its figures.

// ErrForged is returned when a message on a worker's subjects failed its
// authentication: someone else on the bus sent as that worker.
var ErrForged = errors.New("fleet: messages sent as a worker failed authentication")

// keys is one side's curve key pair for the run.
type keys struct {
	kp  nkeys.KeyPair
	pub string
}

func newKeys() (*keys, error) {
	kp, err := nkeys.CreateCurveKeys()
	if err != nil {
		return nil, fmt.Errorf("fleet: keys: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("fleet: keys: %w", err)
	}
	return &keys{kp: kp, pub: pub}, nil
}

// seal encodes v as JSON and seals it to the holder of the public key to.
func (k *keys) seal(v any, to string) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return k.kp.Seal(b, to)
}

// open opens data sealed by the holder of the public key from and decodes
// it into v. An error means it was not from there, or was changed.
func (k *keys) open(data []byte, from string, v any) error {
	b, err := k.kp.Open(data, from)
	if err != nil {
		return fmt.Errorf("not sealed by its sender: %w", err)
	}
	return json.Unmarshal(b, v)
}

// validKey reports whether s is a curve public key.
func validKey(s string) bool {
	_, err := nkeys.FromPublicKey(s)
	return err == nil && len(s) > 0 && s[0] == 'X'
}

// inboxPrefix is the reply-subject prefix of worker id's connection: its
// own, so that on the embedded server it may subscribe to its replies and
// nobody else's.
func inboxPrefix(id string) string { return "_INBOX_" + id }

// WorkerOptions are the NATS connection options a worker named id needs:
// replies on its own inbox prefix.
func WorkerOptions(id string) []nats.Option {
	return []nats.Option{nats.CustomInboxPrefix(inboxPrefix(id))}
}

// workerPermissions are what worker id of fleet may do on the embedded
// server: join, publish its own heartbeats and tallies, answer the
// coordinator's requests, and hear its own subjects, the run's broadcasts
// and its replies. Nothing of another worker's.
func workerPermissions(fleet, id string) *server.Permissions {
	f := "tandem." + fleet
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{f + ".join", f + ".*.w." + id + ".beat", f + ".*.snap.*." + id}},
		Subscribe: &server.SubjectPermission{Allow: []string{f + ".*.w." + id + ".>", f + ".*.beat", f + ".*.stop", f + ".*.done",
			inboxPrefix(id) + ".>"}},
		Response: &server.ResponsePermission{MaxMsgs: 1, Expires: time.Minute},
	}
}

// NkeyOption authenticates a NATS connection with an NKey seed (the
// server knows its public key; the seed never crosses the wire).
func NkeyOption(seed []byte) (nats.Option, error) {
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("fleet: NKey seed: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("fleet: NKey seed: %w", err)
	}
	return nats.Nkey(pub, kp.Sign), nil
}
