package fleet

import (
	"fmt"
	"os"
	"testing"
)

// A worker in a Kubernetes Indexed Job's pod N names itself by its index;
// elsewhere by its host (what a worker id may not hold made -) and pid.
func TestDefaultWorkerID(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "")
	if id, want := defaultWorkerID("gen.example:1"), fmt.Sprintf("gen-example-1-%d", os.Getpid()); id != want {
		t.Errorf("worker id on gen.example:1: %q, want %q", id, want)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "7")
	if id := defaultWorkerID("pod-x"); id != "worker-7" {
		t.Errorf("worker id in pod 7: %q", id)
	}
}
