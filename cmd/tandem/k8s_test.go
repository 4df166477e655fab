package main

import (
	"strings"
	"testing"
)

// TestK8sJob: tandem k8s job prints the Indexed Job (the manifest itself
// is checked against k8s.io/api's Job in internal/k8sjob/apicheck), and a
// worker in pod N names itself by its index.
func TestK8sJob(t *testing.T) {
	code, stdout, stderr := tandem(t, "k8s", "job", "--workers", "50", "--image", "registry.example/tandem:v1",
		"--nats", "nats://nats.load:4222", "--fleet", "nightly", "--namespace", "load", "--deadline", "30m", "--ttl", "2h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kind: Job", "completionMode: Indexed", "completions: 50", "activeDeadlineSeconds: 1800",
		"ttlSecondsAfterFinished: 7200", "backoffLimitPerIndex: 1", "action: FailIndex", "- nats://nats.load:4222", "namespace: load"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the manifest lacks %q:\n%s", want, stdout)
		}
	}
	t.Setenv("JOB_COMPLETION_INDEX", "7")
	if id := defaultWorkerID("pod-x"); id != "worker-7" {
		t.Errorf("worker id in pod 7: %q", id)
	}
}

// TestK8sJobBadInput: a manifest without an image or NATS, or with no
// workers, is refused with exit 2.
func TestK8sJobBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--nats", "nats://n:4222"},
		{"--image", "i"},
		{"--image", "i", "--nats", "nats://n:4222", "--workers", "0"},
		{"--image", "i", "--nats", "nats://n:4222", "--fleet", "a b"},
	} {
		if code, _, stderr := tandem(t, append([]string{"k8s", "job"}, args...)...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}
