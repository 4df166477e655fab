package main

import (
	"strings"
	"testing"
)

// TestK8sJob: tandem k8s job prints the Indexed Job (the manifest itself
// is checked against k8s.io/api's Job in internal/k8sjob/apicheck).
func TestK8sJob(t *testing.T) {
	code, stdout, stderr := tandem(t, "k8s", "job", "--workers", "50", "--image", "registry.example/tandem:v1",
		"--nats", "nats://nats.load:4222", "--fleet", "nightly", "--namespace", "load", "--deadline", "30m", "--ttl", "2h")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kind: Job", "completionMode: Indexed", "completions: 50", "activeDeadlineSeconds: 1800",
		"ttlSecondsAfterFinished: 7200", "backoffLimitPerIndex: 1", "action: FailIndex", "- nats://nats.load:4222", "namespace: load",
		"automountServiceAccountToken: false", "runAsNonRoot: true", "readOnlyRootFilesystem: true", "allowPrivilegeEscalation: false",
		"type: RuntimeDefault", "- ALL"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the manifest lacks %q:\n%s", want, stdout)
		}
	}
}

// TestK8sJobBadInput: what Kubernetes would refuse, and a secret on the
// command line, are refused with exit 2 and the flag named.
func TestK8sJobBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nats", "nats://n:4222"}, "--image"},
		{[]string{"--image", "i"}, "--nats"},
		{[]string{"--image", "i", "--nats", "nats://n:4222", "--workers", "0"}, "--workers 0"},
		{[]string{"--image", "i", "--nats", "nats://n:4222", "--workers", "1000000000"}, "want 1 to 100000"},
		{[]string{"--image", "i", "--nats", "nats://n:4222", "--fleet", "a b"}, "--fleet"},
		{[]string{"--image", "i", "--nats", "nats://n:4222", "--memory", "512Mi; rm"}, `--memory "512Mi; rm"`},
		{[]string{"--image", "i", "--nats", "nats://n:4222", "--cpu", "0"}, "--cpu"},
		{[]string{"--image", "i", "--nats", "nats://n:4222", "--name", "Tandem_Workers"}, "--name"},
		{[]string{"--image", "i", "--nats", "nats://n:4222", "--namespace", "a.b"}, "--namespace"},
		{[]string{"--image", "i", "--nats", "nats://n:4222", "--pull-policy", "sometimes"}, "--pull-policy"},
		{[]string{"--image", "i; rm -rf /", "--nats", "nats://n:4222"}, "--image"},
		{[]string{"--image", "i", "--nats", "nats://u:Secret@n:4222"}, "--nats-creds-secret"},
		{[]string{"--image", "i", "--nats", "nats://n:4222", "--nats-creds-secret", "Bad_Name"}, "--nats-creds-secret"},
	} {
		code, _, stderr := tandem(t, append([]string{"k8s", "job"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "Secret@") {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// The NATS credentials reach the pods from a Secret, mounted read-only,
// never in the Job's args.
func TestK8sJobCredsFromSecret(t *testing.T) {
	code, stdout, stderr := tandem(t, "k8s", "job", "--image", "i", "--nats", "tls://nats.load:4222", "--nats-creds-secret", "tandem-nats")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"secretName: tandem-nats", "readOnly: true", "- --nats-creds", "- /var/run/secrets/tandem-nats/nats.creds",
		"defaultMode: 256"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the manifest lacks %q:\n%s", want, stdout)
		}
	}
}
