package link

import (
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/tooltest"
)

// Through the kernel's path the link keeps its own delay, the kernel drops
// packets (counted, the stream whole) and Cut still resets both ends; the
// conditions read back as given.
func TestKernelPath(t *testing.T) {
	tooltest.Kernel(t)
	srv := newServer(t, echo)
	up := Conditions{Delay: 5 * time.Millisecond, Loss: 0.05}
	down := Conditions{Delay: 5 * time.Millisecond, Loss: 0.05, Bandwidth: 4 << 20}
	l := newLink(t, Options{Upstream: srv.addr(), Up: up, Down: down, Kernel: true})
	if !l.Kernel() {
		t.Fatal("Kernel() false on a link made with Kernel")
	}
	if gu, gd := l.Conditions(); gu != up || gd != down {
		t.Errorf("conditions %+v, %+v; want %+v, %+v as given", gu, gd, up, down)
	}
	c := dial(t, l.Addr())
	if _, rtt := roundTrip(t, c, []byte("hello")); rtt < 10*time.Millisecond {
		t.Errorf("round trip %v through 5 ms each way", rtt)
	}
	msg := randomBytes(t, 1<<20)
	if got, _ := roundTrip(t, c, msg); string(got) != string(msg) {
		t.Fatal("the echo differs from what was sent")
	}
	st := l.Stats()
	if st.Up.Packets < 300 || st.Down.Packets < 300 || st.Up.Lost == 0 || st.Down.Lost == 0 {
		t.Errorf("stats %+v; want hundreds of packets each way, some dropped", st)
	}
	cutResets(t, l, c, srv)
	l.Restore()
	if err := l.Set(Conditions{}, Conditions{}); err != nil {
		t.Fatal(err)
	}
	c2 := dial(t, l.Addr())
	if got, _ := roundTrip(t, c2, []byte("back")); string(got) != "back" {
		t.Errorf("after Restore: got %q", got)
	}
}
