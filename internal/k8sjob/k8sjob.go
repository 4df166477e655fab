// Package k8sjob writes the Kubernetes Job that places tandem workers: an
// Indexed Job whose pods each run tandem worker against one NATS server.
// Its manifest is checked against the Kubernetes API's own types by the
// module in apicheck (kept apart: k8s.io/api is large to build).
package k8sjob

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Options are tandem k8s job's flags.
type Options struct {
	Workers, BackoffPerIndex       int
	Name, Namespace, Image, NATS   string
	Fleet, CPU, Memory, PullPolicy string
	Deadline, TTL, Wait            time.Duration
	// CredsSecret names a Secret whose key nats.creds holds the NATS
	// credentials file the workers authenticate with ("" for none).
	CredsSecret string
}

// MaxWorkers is the most pods an Indexed Job may have (completions).
const MaxWorkers = 100_000

// credsDir is where the credentials Secret is mounted in a worker's pod.
const credsDir = "/var/run/secrets/tandem-nats"

// quantity is a Kubernetes resource quantity (k8s.io/apimachinery's
// resource.ParseQuantity: a decimal number and a suffix), its decimal
// exponent at most two digits (Kubernetes refuses one past 32 bits, and
// no CPU or memory needs more); apicheck fuzzes it against that parser.
var quantity = regexp.MustCompile(`^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]{1,2})?$`)

// dns1123Label is a Kubernetes object name of one label (a namespace);
// dns1123Subdomain a Job's name: lower-case alphanumerics and '-', each
// label starting and ending alphanumeric.
var (
	dns1123Label     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// ValidQuantity reports whether s is a Kubernetes resource quantity
// above zero of at most 64 characters, as a CPU or memory request.
func ValidQuantity(s string) bool {
	if len(s) > 64 || !quantity.MatchString(s) {
		return false
	}
	end := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '+' })
	if end < 0 {
		end = len(s)
	}
	return strings.ContainsAny(s[:end], "123456789") // the number is not zero
}

// ValidJobName reports whether s may name a Job (a DNS-1123 subdomain; 63
// characters at most, as the pods' job-name label must fit).
func ValidJobName(s string) bool { return len(s) <= 63 && dns1123Subdomain.MatchString(s) }

// ValidNamespace reports whether s may name a namespace (a DNS-1123 label).
func ValidNamespace(s string) bool { return len(s) <= 63 && dns1123Label.MatchString(s) }

// ValidName matches a fleet or worker name: letters, digits, - and _ (a
// NATS subject token and a Kubernetes label value).
var ValidName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Write writes the Job's manifest as YAML.
func Write(w io.Writer, o Options) error {
	m, err := Manifest(o)
	if err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("k8s job: %w", err)
	}
	return enc.Close()
}

// Manifest is the Job as YAML-ready maps, in the field names of the
// Kubernetes API (batch/v1 Job); bad options are an error naming the flag.
func Manifest(o Options) (map[string]any, error) {
	var errs []error
	if o.Workers < 1 || o.Workers > MaxWorkers {
		errs = append(errs, fmt.Errorf("--workers %d: want 1 to %d (an Indexed Job's most completions)", o.Workers, MaxWorkers))
	}
	if o.Image == "" || strings.ContainsAny(o.Image, " \t\n\r\"'`;$") || len(o.Image) > 4096 {
		errs = append(errs, fmt.Errorf("--image %q: the container image with tandem in it (a reference such as registry.example/tandem:v1)", o.Image))
	}
	if u, err := url.Parse(o.NATS); o.NATS == "" || err != nil || u.Host == "" {
		errs = append(errs, errors.New("--nats: the NATS server the fleet meets on, as the pods reach it (nats://HOST:PORT or tls://HOST:PORT)"))
	} else if u.User != nil {
		errs = append(errs, errors.New("--nats: a URL with a user or password would put a secret in the Job's args, readable by anyone who may read the Job: "+
			"keep the credentials in a Secret and name it with --nats-creds-secret"))
	}
	if o.CredsSecret != "" && !ValidJobName(o.CredsSecret) {
		errs = append(errs, fmt.Errorf("--nats-creds-secret %q: a Secret's name (lower-case letters, digits, - and .)", o.CredsSecret))
	}
	if !ValidJobName(o.Name) {
		errs = append(errs, fmt.Errorf("--name %q: a Job's name (lower-case letters, digits, - and ., at most 63)", o.Name))
	}
	if o.Namespace != "" && !ValidNamespace(o.Namespace) {
		errs = append(errs, fmt.Errorf("--namespace %q: a namespace (lower-case letters, digits and -, at most 63)", o.Namespace))
	}
	if !ValidQuantity(o.CPU) {
		errs = append(errs, fmt.Errorf("--cpu %q: a Kubernetes quantity above zero, such as 1, 500m or 2.5", o.CPU))
	}
	if !ValidQuantity(o.Memory) {
		errs = append(errs, fmt.Errorf("--memory %q: a Kubernetes quantity above zero, such as 512Mi or 2Gi", o.Memory))
	}
	if o.PullPolicy != "Always" && o.PullPolicy != "IfNotPresent" && o.PullPolicy != "Never" {
		errs = append(errs, fmt.Errorf("--pull-policy %q: want Always, IfNotPresent or Never", o.PullPolicy))
	}
	if !ValidName.MatchString(o.Fleet) {
		errs = append(errs, fmt.Errorf("--fleet %q: want letters, digits, - and _", o.Fleet))
	}
	if o.Deadline < time.Second || o.TTL < 0 || o.Wait <= 0 || o.BackoffPerIndex < 0 {
		errs = append(errs, errors.New("--deadline, --ttl, --wait, --backoff-per-index: want positive values (a deadline of at least 1s)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	labels := map[string]any{"app.kubernetes.io/name": "tandem", "app.kubernetes.io/component": "worker", "tandem/fleet": o.Fleet}
	meta := map[string]any{"name": o.Name, "labels": labels}
	if o.Namespace != "" {
		meta["namespace"] = o.Namespace
	}
	resources := map[string]any{"cpu": o.CPU, "memory": o.Memory}
	args := []any{"worker", "--nats", o.NATS, "--fleet", o.Fleet, "--wait", o.Wait.String()}
	container := map[string]any{
		"name":            "worker",
		"image":           o.Image,
		"imagePullPolicy": o.PullPolicy,
		// named by its index (worker-N); its host is its node
		"env":       []any{map[string]any{"name": "TANDEM_WORKER_HOST", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "spec.nodeName"}}}},
		"resources": map[string]any{"requests": resources, "limits": resources},
		// a worker needs no privilege, no writable root and no capability
		"securityContext": map[string]any{
			"allowPrivilegeEscalation": false,
			"readOnlyRootFilesystem":   true,
			"runAsNonRoot":             true,
			"capabilities":             map[string]any{"drop": []any{"ALL"}},
		},
	}
	pod := map[string]any{
		"restartPolicy": "Never",
		// it talks to NATS and its target, never to the Kubernetes API
		"automountServiceAccountToken": false,
		"securityContext": map[string]any{
			"runAsNonRoot":   true,
			"runAsUser":      65532, // nonroot in distroless images; any image's unprivileged user works
			"runAsGroup":     65532,
			"seccompProfile": map[string]any{"type": "RuntimeDefault"},
		},
	}
	if o.CredsSecret != "" {
		args = append(args, "--nats-creds", credsDir+"/nats.creds")
		container["volumeMounts"] = []any{map[string]any{"name": "nats-creds", "mountPath": credsDir, "readOnly": true}}
		pod["volumes"] = []any{map[string]any{"name": "nats-creds", "secret": map[string]any{
			"secretName": o.CredsSecret, "defaultMode": 0o400, "items": []any{map[string]any{"key": "nats.creds", "path": "nats.creds"}}}}}
	}
	container["args"] = args
	pod["containers"] = []any{container}
	return map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   meta,
		"spec": map[string]any{
			"completionMode":       "Indexed",
			"completions":          o.Workers,
			"parallelism":          o.Workers,
			"backoffLimitPerIndex": o.BackoffPerIndex,
			// a worker that ran and was stopped or lost its coordinator
			// (exit 1) is not retried: the run went on without it
			"podFailurePolicy": map[string]any{"rules": []any{map[string]any{
				"action":      "FailIndex",
				"onExitCodes": map[string]any{"containerName": "worker", "operator": "In", "values": []any{1}},
			}}},
			"activeDeadlineSeconds":   int64(o.Deadline.Seconds()),
			"ttlSecondsAfterFinished": int64(o.TTL.Seconds()),
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     pod,
			},
		},
	}, nil
}
