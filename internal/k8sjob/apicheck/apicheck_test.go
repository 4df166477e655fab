// Package apicheck checks tandem's Kubernetes Job against the Kubernetes
// API's own types (k8s.io/api). It is a module of its own so that the
// main module's builds, vets and race tests do not compile k8s.io/api;
// test.sh runs it as a step.
package apicheck

import (
	"bytes"
	"testing"
	"time"

	"github.com/tandem-bench/tandem/internal/k8sjob"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// TestJobIsAValidIndexedJob decodes the manifest into the Kubernetes API's
// Job type, strictly (an unknown or misspelt field fails), and checks what
// makes it a fleet of workers.
func TestJobIsAValidIndexedJob(t *testing.T) {
	var b bytes.Buffer
	err := k8sjob.Write(&b, k8sjob.Options{Workers: 50, Image: "registry.example/tandem:v1", NATS: "nats://nats.load:4222",
		Fleet: "nightly", Name: "tandem-workers", Namespace: "load", CPU: "1", Memory: "512Mi", PullPolicy: "IfNotPresent",
		BackoffPerIndex: 1, Deadline: 30 * time.Minute, TTL: 2 * time.Hour, Wait: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(b.Bytes(), &job); err != nil {
		t.Fatalf("not a batch/v1 Job: %v\n%s", err, b.String())
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
		p.Rules[0].OnExitCodes == nil || len(p.Rules[0].OnExitCodes.Values) != 1 || p.Rules[0].OnExitCodes.Values[0] != 1 ||
		p.Rules[0].OnExitCodes.ContainerName == nil || *p.Rules[0].OnExitCodes.ContainerName != "worker" {
		t.Errorf("pod failure policy %+v; want FailIndex on the worker's exit 1 (a worker stopped mid-run is not retried)", s.PodFailurePolicy)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("pod %+v; backoffLimitPerIndex needs restartPolicy Never", pod)
	}
	c := pod.Containers[0]
	want := []string{"worker", "--nats", "nats://nats.load:4222", "--fleet", "nightly", "--wait", "10m0s"}
	if c.Name != "worker" || c.Image != "registry.example/tandem:v1" || len(c.Args) != len(want) {
		t.Fatalf("container %s %s %q", c.Name, c.Image, c.Args)
	}
	for i := range want {
		if c.Args[i] != want[i] {
			t.Errorf("args %q; want %q", c.Args, want)
		}
	}
	if c.Resources.Limits.Cpu().String() != "1" || c.Resources.Requests.Memory().String() != "512Mi" {
		t.Errorf("resources %+v", c.Resources)
	}
	sc, psc := c.SecurityContext, pod.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("container security context %+v; want no escalation, a read-only root, every capability dropped, not root", sc)
	}
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
		pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("pod security context %+v, automount %v; want not root, seccomp RuntimeDefault, no service-account token", psc, pod.AutomountServiceAccountToken)
	}
	if len(c.Env) != 1 || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef == nil || c.Env[0].ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("env %+v; want the node's name for the results", c.Env)
	}
}

// TestStrictDecodeRefusesAMisspeltField shows the check can fail: a field
// the Job type does not have is refused.
func TestStrictDecodeRefusesAMisspeltField(t *testing.T) {
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte("apiVersion: batch/v1\nkind: Job\nspec:\n  completionMod: Indexed\n"), &job); err == nil {
		t.Error("a misspelt field decoded")
	}
}

// The credentials Secret is mounted read-only and named in the args by
// its path; the Job decodes strictly with it.
func TestJobWithCredsSecret(t *testing.T) {
	var b bytes.Buffer
	err := k8sjob.Write(&b, k8sjob.Options{Workers: 2, Image: "i", NATS: "tls://nats:4222", Fleet: "f", Name: "tandem-workers", CPU: "500m",
		Memory: "1Gi", PullPolicy: "Always", Deadline: time.Hour, Wait: time.Minute, CredsSecret: "tandem-nats"})
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(b.Bytes(), &job); err != nil {
		t.Fatalf("not a batch/v1 Job: %v\n%s", err, b.String())
	}
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	if len(pod.Volumes) != 1 || pod.Volumes[0].Secret == nil || pod.Volumes[0].Secret.SecretName != "tandem-nats" ||
		pod.Volumes[0].Secret.DefaultMode == nil || *pod.Volumes[0].Secret.DefaultMode != 0o400 {
		t.Errorf("volumes %+v", pod.Volumes)
	}
	if len(c.VolumeMounts) != 1 || !c.VolumeMounts[0].ReadOnly || c.Args[len(c.Args)-2] != "--nats-creds" ||
		c.Args[len(c.Args)-1] != c.VolumeMounts[0].MountPath+"/nats.creds" {
		t.Errorf("mounts %+v, args %q", c.VolumeMounts, c.Args)
	}
}

// FuzzQuantity: what tandem k8s job takes as --cpu or --memory, the
// Kubernetes API's own parser takes too, as a quantity above zero.
func FuzzQuantity(f *testing.F) {
	for _, s := range []string{"1", "500m", "512Mi", "2.5", "1e3", "0", "0.0", "+1", ".5", "1.", "5E", "1Ki", "1ki", "-1", "512Mi; rm", "1e-3", "0e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !k8sjob.ValidQuantity(s) {
			return
		}
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() <= 0 {
			t.Fatalf("tandem takes %q; Kubernetes: %v (sign %d)", s, err, q.Sign())
		}
	})
}

// The names tandem k8s job takes are names Kubernetes takes.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"tandem-workers", "a.b", "A", "a_b", "-a", "a-", "x", "a..b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if k8sjob.ValidJobName(s) && len(validation.IsDNS1123Subdomain(s)) > 0 {
			t.Fatalf("tandem takes Job name %q; Kubernetes: %v", s, validation.IsDNS1123Subdomain(s))
		}
		if k8sjob.ValidNamespace(s) && len(validation.IsDNS1123Label(s)) > 0 {
			t.Fatalf("tandem takes namespace %q; Kubernetes: %v", s, validation.IsDNS1123Label(s))
		}
	})
}
