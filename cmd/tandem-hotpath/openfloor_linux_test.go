package main

import (
	"net"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/pong"
)

// The open floor sends every arrival of its timetable to a real loopback
// server and every one is answered; nothing is sent early.
func TestOpenFloor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go pong.Serve(ln)
	sent, answered, lag, err := openFloor(ln.Addr().String(), 1000, 4, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if sent != 100 || answered != sent || lag < 0 {
		t.Errorf("sent %d, answered %d, lag p50 %v; want 100 sent, all answered, lag ≥ 0", sent, answered, lag)
	}
	if _, _, _, err := openFloor(ln.Addr().String(), 10, 1, time.Millisecond); err == nil {
		t.Error("no arrival in the run: no error")
	}
}
