package load

import (
	"context"
	"testing"
	"time"
)

// The alarm of systems without a timerfd: it never wakes early, a past time
// returns at once, and a cancelled context ends a long wait.
func TestTimerAlarm(t *testing.T) {
	a := newTimerAlarm()
	defer a.close()
	ctx := context.Background()
	for range 3 {
		at := time.Now().Add(5 * time.Millisecond)
		if !a.wait(ctx, at) {
			t.Fatal("wait returned false with a live context")
		}
		if now := time.Now(); now.Before(at) {
			t.Fatalf("woke %v early", at.Sub(now))
		}
	}
	if !a.wait(ctx, time.Now().Add(-time.Second)) {
		t.Fatal("a past time: want true")
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(10*time.Millisecond, cancel)
	start := time.Now()
	if a.wait(cctx, time.Now().Add(time.Hour)) {
		t.Fatal("cancelled: want false")
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("a cancelled wait took %v", d)
	}
	if a.wait(cctx, time.Now().Add(-time.Second)) {
		t.Fatal("a past time with a cancelled context: want false")
	}
}
