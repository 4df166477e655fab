package main

import (
	"testing"
	"time"
)

// The floor's round trips go through a real loopback connection: each
// costs something, and no more than a generous bound on any machine.
func TestFloor(t *testing.T) {
	per, err := floor(200)
	if err != nil {
		t.Fatal(err)
	}
	if per <= 0 || per > 50*time.Millisecond {
		t.Errorf("floor: %v per request; want a positive time below 50 ms", per)
	}
}
