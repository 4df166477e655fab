package main

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestK8sJobIsAValidIndexedJob decodes tandem k8s job's manifest into the
// Kubernetes API's own Job type, strictly (an unknown or misspelt field
// fails), and checks what makes it a fleet of workers.
func TestK8sJobIsAValidIndexedJob(t *testing.T) {
	code, stdout, stderr := tandem(t, "k8s", "job", "--workers", "50", "--image", "registry.example/tandem:v1",
		"--nats", "nats://nats.load:4222", "--fleet", "nightly", "--namespace", "load", "--deadline", "30m", "--ttl", "2h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(stdout), &job); err != nil {
		t.Fatalf("not a batch/v1 Job: %v\n%s", err, stdout)
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Namespace != "load" || job.Name != "tandem-workers" {
		t.Errorf("type %s/%s, %s/%s", job.APIVersion, job.Kind, job.Namespace, job.Name)
	}
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || s.Completions == nil || *s.Completions != 50 ||
		s.Parallelism == nil || *s.Parallelism != 50 {
		t.Errorf("not an Indexed Job of 50 pods at once: %+v", s)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 1 || s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds != 1800 ||
		s.TTLSecondsAfterFinished == nil || *s.TTLSecondsAfterFinished != 7200 {
		t.Errorf("backoff per index, deadline, ttl: %+v", s)
	}
	if p := s.PodFailurePolicy; p == nil || len(p.Rules) != 1 || p.Rules[0].Action != batchv1.PodFailurePolicyActionFailIndex ||
		p.Rules[0].OnExitCodes == nil || len(p.Rules[0].OnExitCodes.Values) != 1 || p.Rules[0].OnExitCodes.Values[0] != 1 {
		t.Errorf("pod failure policy %+v; want FailIndex on exit 1 (a worker stopped mid-run is not retried)", s.PodFailurePolicy)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("pod %+v; backoffLimitPerIndex needs restartPolicy Never", pod)
	}
	c := pod.Containers[0]
	if c.Image != "registry.example/tandem:v1" || strings.Join(c.Args, " ") != "worker --nats nats://nats.load:4222 --fleet nightly --wait 10m0s" {
		t.Errorf("container %s %q", c.Image, c.Args)
	}
	if c.Resources.Limits.Cpu().String() != "1" || c.Resources.Requests.Memory().String() != "512Mi" {
		t.Errorf("resources %+v", c.Resources)
	}
	// the worker names itself by the index Kubernetes gives the pod
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
