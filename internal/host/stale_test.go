package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// What a dead process left under a StaleName is removed; what a live
// one's, this process's, a look-alike's or a link's is kept.
func TestRemoveStale(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	gone := strconv.Itoa(dead.Process.Pid)
	stale := []string{"tandem-nats-" + gone + "-123", "tandem-worker-" + gone + "-77.log"}
	keep := []string{StaleName("tandem-nats-") + "5", "tandem-nats-" + strconv.Itoa(os.Getppid()) + "-5",
		"tandem-nats-x-5", "tandem-nats-" + gone + "-", "tandem-nats-" + gone + "-5a", "notes.tmp"}
	for _, n := range append(slices.Clone(keep), stale[1]) {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	os.MkdirAll(filepath.Join(dir, stale[0], "jetstream"), 0o700)
	link := "tandem-nats-" + gone + "-9"
	os.Symlink(elsewhere, filepath.Join(dir, link))
	keep = append(keep, link)
	var removed []string
	for _, p := range [][2]string{{"tandem-nats-", ""}, {"tandem-worker-", ".log"}} {
		r, err := RemoveStale(dir, p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		removed = append(removed, r...)
	}
	if !slices.Equal(removed, stale) {
		t.Errorf("removed %v; want %v", removed, stale)
	}
	for _, n := range keep {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
	if _, err := os.Stat(elsewhere); err != nil {
		t.Errorf("the link's target: %v", err)
	}
}
