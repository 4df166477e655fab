package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-bench/tandem/internal/tooltest"
	"go.yaml.in/yaml/v3"
)

// The study the pipeline test runs: the two builds of the sample service
// that the pipeline's build step made, on the JSON-RPC balance call, where
// build b stalls ~40 ms per request.
const ciStudy = `version: 1
name: ci pipeline
startup: {runs: 1}
defaults: {warmup: 100ms, min_duration: 200ms, max_rounds: 12}
targets:
  - name: base
    start:
      command: ["${env.TANDEM_BASE}", --data, "${workdir}/data", --grpc, "127.0.0.1:${port.grpc}", --http, "127.0.0.1:${port.http}"]
      wipe: ["${workdir}/data"]
    endpoints: {grpc: "127.0.0.1:${port.grpc}", http: "http://127.0.0.1:${port.http}/"}
    ready: {first_answer: {call: ping}, condition: {call: info, path: indexed, equals: true}, timeout: 5m}
  - name: head
    start:
      command: ["${env.TANDEM_HEAD}", --data, "${workdir}/data", --grpc, "127.0.0.1:${port.grpc}", --http, "127.0.0.1:${port.http}"]
      wipe: ["${workdir}/data"]
    endpoints: {grpc: "127.0.0.1:${port.grpc}", http: "http://127.0.0.1:${port.http}/"}
    ready: {first_answer: {call: ping}, condition: {call: info, path: indexed, equals: true}, timeout: 5m}
calls:
  ping: {grpc: {method: tandem.sample.v1.Ledger/Ping}}
  info: {grpc: {method: tandem.sample.v1.Ledger/Info}}
  balance: {jsonrpc: {method: getbalance, params: [tz1000042]}}
scenarios:
  - {name: balance-latency, call: balance, load: {concurrency: 1}}
`

// The build command: the "binary" is a script that serves the build named
// in the checkout's BUILD file (a on main, b on the pull request).
const ciBuild = `printf '#!/bin/sh\nexec tandem sample serve --build %s --blocks 300 --work 10 "$@"\n' "$(cat BUILD)" > "$OUT" && chmod +x "$OUT"`

// ghWorkflow is what the pipeline test reads of a GitHub Actions workflow.
type ghWorkflow struct {
	Env      map[string]string
	Defaults struct {
		Run struct{ Shell string }
	}
	Jobs map[string]struct {
		Steps []ghStep
	}
}

// readWorkflow reads a GitHub Actions workflow file.
func readWorkflow(t *testing.T, path string) ghWorkflow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w ghWorkflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

type ghStep struct {
	ID, Name, If, Uses, Run string
	Env                     map[string]string
	With                    map[string]string
}

// tandem ci init --build writes a workflow whose steps, run in order here
// with GitHub's default shell (bash -e, no pipefail: the steps must not
// lean on the shell the workflow asks for), the actions themselves emulated
// (checkout, setup-go and cache do nothing, the artifact actions copy
// files), make the whole pipeline work: a pull request that switches to
// build b builds the base and the head, runs them side by side, and the
// gate on their paired rounds fails the job; a push to main (both build a)
// passes without a gate.
func TestCIInitPipeline(t *testing.T) {
	tooltest.Long(t) // runs the study twice
	t.Parallel()     // child processes and waits; asserts outcomes, not speed
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	write(t, filepath.Join(repo, "bench", "study.yaml"), ciStudy)
	write(t, filepath.Join(repo, "BUILD"), "a")

	// the study runs builds: init without --build refuses it
	code, _, stderr := tandem(t, "ci", "init", "--dir", repo, "--tandem-version", "v0.0.0-test", filepath.Join(repo, "bench", "study.yaml"))
	if code != 2 || !strings.Contains(stderr, "--build") {
		t.Fatalf("ci init without a build: exit %d: %s; want 2 and a word on --build", code, stderr)
	}
	code, stdout, stderr := tandem(t, "ci", "init", "--dir", repo, "--tandem-version", "v0.0.0-test", "--build", ciBuild, filepath.Join(repo, "bench", "study.yaml"))
	if code != 0 {
		t.Fatalf("ci init: exit %d: %s", code, stderr)
	}
	wf := filepath.Join(repo, ".github", "workflows", "tandem.yml")
	if !strings.Contains(stdout, wf) {
		t.Errorf("ci init did not say what it wrote: %s", stdout)
	}
	if code, _, stderr := tandem(t, "ci", "init", "--dir", repo, "--tandem-version", "v0.0.0-test", "--build", ciBuild, filepath.Join(repo, "bench", "study.yaml")); code != 2 || !strings.Contains(stderr, "--force") {
		t.Errorf("a second init: exit %d, %s; want 2 and a word on --force", code, stderr)
	}
	git("add", ".")
	git("commit", "-qm", "main")
	mainSHA := git("rev-parse", "HEAD")
	w := readWorkflow(t, wf)
	p := &pipeline{t: t, w: w, repo: repo, artifacts: t.TempDir(), bin: t.TempDir()}
	p.setup()

	pinnedUses(t, wf, w, []string{"actions/checkout", "actions/setup-go", "actions/cache", "actions/upload-artifact"})
	if w.Defaults.Run.Shell != "bash" {
		t.Errorf("defaults.run.shell %q; want bash (-eo pipefail)", w.Defaults.Run.Shell)
	}

	// 1. a pull request that switches to build b: base and head side by
	// side, head stalls, the gate fails the job
	git("checkout", "-qb", "pr")
	write(t, filepath.Join(repo, "BUILD"), "b")
	git("commit", "-qam", "build b")
	sum, failed := p.run("1", "pull_request", mainSHA, "")
	if failed != "gate" {
		t.Fatalf("the pull request with build b: failed at step %q, want the gate:\n%s", failed, sum)
	}
	if !regexp.MustCompile(`(?i)regression`).MatchString(sum) || !strings.Contains(sum, "head vs base") || !strings.Contains(sum, "slower") {
		t.Errorf("the gate's summary does not name head's regression against base:\n%s", sum)
	}
	for _, f := range []string{"results.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(p.artifacts, "1", "tandem-results", f)); err != nil {
			t.Errorf("artifact %s: %v", f, err)
		}
	}

	// 2. a push to main: both sides build a, no gate
	git("checkout", "-q", "main")
	sum, failed = p.run("2", "push", mainSHA, "")
	if failed != "" {
		t.Fatalf("the push failed at step %s:\n%s", failed, sum)
	}
	if !strings.Contains(sum, "no gate") || !strings.Contains(sum, "balance-latency") {
		t.Errorf("the push's summary lacks the report or the word on the gate:\n%s", sum)
	}
}

// pinnedUses checks every action a workflow uses, in any job and on any
// line of the file, is pinned to a full commit (a tag can be moved), and
// that the actions it must use are among them.
func pinnedUses(t *testing.T, path string, w ghWorkflow, want []string) {
	t.Helper()
	pinned := regexp.MustCompile(`@[0-9a-f]{40}$`)
	var steps []string
	for name, job := range w.Jobs {
		for _, st := range job.Steps {
			if st.Uses == "" {
				continue
			}
			steps = append(steps, st.Uses)
			if !pinned.MatchString(st.Uses) {
				t.Errorf("%s: job %s, step %s uses %s: not pinned to a full commit", path, name, st.ID, st.Uses)
			}
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0 // every uses: line, whatever the YAML around it
	usesLine := regexp.MustCompile(`^\s*(-\s+)?uses:\s*(\S+)\s*(#.*)?$`)
	for i, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, "uses:") || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		lines++
		if m := usesLine.FindStringSubmatch(line); m == nil || !pinned.MatchString(m[2]) {
			t.Errorf("%s:%d: %q: not an action pinned to a full commit", path, i+1, line)
		}
	}
	if lines != len(steps) {
		t.Errorf("%s: %d uses: lines, %d steps that use an action: %v", path, lines, len(steps), steps)
	}
	for _, action := range want {
		if !slices.ContainsFunc(steps, func(u string) bool { return strings.HasPrefix(u, action+"@") }) {
			t.Errorf("%s: no step uses %s: %v", path, action, steps)
		}
	}
}

// The gate step fails the job when tandem compare exits 1, with GitHub's
// default shell (bash -e {0}: a pipe into tee would have hidden it), with
// and without --build; its report still reaches the summary. Every
// action either workflow uses is pinned to a full commit.
func TestCIGateStepFails(t *testing.T) {
	repo := t.TempDir()
	write(t, filepath.Join(repo, "study.yaml"), ciStudy)
	write(t, filepath.Join(repo, "plain.yaml"), strings.NewReplacer("${env.TANDEM_BASE}", "/bin/base", "${env.TANDEM_HEAD}", "/bin/head").Replace(ciStudy))
	bin := t.TempDir()
	write(t, filepath.Join(bin, "tandem"), "#!/bin/sh\necho '## tandem compare: **regression**'\nexit 1\n")
	os.Chmod(filepath.Join(bin, "tandem"), 0o755)
	for _, args := range [][]string{{"plain.yaml"}, {"study.yaml", "--build", "make"}} {
		wf := filepath.Join(repo, ".github", "workflows", "tandem.yml")
		os.Remove(wf)
		args[0] = filepath.Join(repo, args[0])
		if code, _, stderr := tandem(t, append([]string{"ci", "init", "--dir", repo, "--tandem-version", "v0.0.0-test"}, args...)...); code != 0 {
			t.Fatalf("ci init %v: exit %d: %s", args, code, stderr)
		}
		w := readWorkflow(t, wf)
		actions := []string{"actions/checkout", "actions/setup-go", "actions/cache", "actions/upload-artifact"}
		if len(args) == 1 { // without builds the base branch's results are downloaded
			actions = append(actions, "actions/download-artifact")
		}
		pinnedUses(t, wf, w, actions)
		var gate string
		for _, st := range w.Jobs["tandem"].Steps {
			if st.ID == "gate" {
				gate = st.Run
			}
		}
		work := t.TempDir()
		write(t, filepath.Join(work, "tandem-base", "results.json"), "{}")
		summary := filepath.Join(work, "summary.md")
		write(t, summary, "")
		cmd := exec.Command("bash", "-e", "-c", gate) // GitHub's default shell: bash -e {0}
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "GITHUB_EVENT_NAME=pull_request", "GITHUB_STEP_SUMMARY="+summary,
			"TANDEM_OUT=tandem-out", "TANDEM_MAX_REGRESSION=5")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%v: the gate step passed when tandem compare exited 1:\n%s", args, out)
		}
		if got, _ := os.ReadFile(summary); !bytes.Contains(got, []byte("regression")) {
			t.Errorf("%v: the summary lacks the gate's report: %q", args, got)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The workflows ci init writes, with and without builds, pass actionlint
// (test.sh installs it and requires it).
func TestCIInitPassesActionlint(t *testing.T) {
	bin := tooltest.Need(t, "TANDEM_REQUIRE_ACTIONLINT", "actionlint")
	repo := t.TempDir()
	write(t, filepath.Join(repo, "study.yaml"), ciStudy)
	write(t, filepath.Join(repo, "plain.yaml"), strings.NewReplacer("${env.TANDEM_BASE}", "/bin/base", "${env.TANDEM_HEAD}", "/bin/head").Replace(ciStudy))
	for _, args := range [][]string{{"plain.yaml"}, {"study.yaml", "--build", ciBuild}, {"study.yaml", "--build", "make", "--branch", "develop", "--max-regression", "2.5"}} {
		wf := filepath.Join(repo, ".github", "workflows", "tandem.yml")
		os.Remove(wf)
		args[0] = filepath.Join(repo, args[0])
		if code, _, stderr := tandem(t, append([]string{"ci", "init", "--dir", repo, "--tandem-version", "v0.0.0-test"}, args...)...); code != 0 {
			t.Fatalf("ci init %v: exit %d: %s", args, code, stderr)
		}
		if out, err := exec.Command(bin, wf).CombinedOutput(); err != nil {
			t.Errorf("actionlint on the workflow of %v: %v\n%s", args, err, out)
		}
	}
}

// pipeline runs a workflow's steps on this machine, as GitHub would.
type pipeline struct {
	t                    *testing.T
	w                    ghWorkflow
	repo, artifacts, bin string
}

// setup puts this test binary on PATH as tandem (it serves as the CLI in
// child processes) and a gh that answers with the base branch's last run.
func (p *pipeline) setup() {
	if err := os.Symlink(os.Args[0], filepath.Join(p.bin, "tandem")); err != nil {
		p.t.Fatal(err)
	}
	write(p.t, filepath.Join(p.bin, "gh"), "#!/bin/sh\necho \"$*\" >> \""+filepath.Join(p.bin, "gh.args")+"\"\necho \"$TANDEM_TEST_BASE_RUN\"\n")
	os.Chmod(filepath.Join(p.bin, "gh"), 0o755)
}

// run runs the job as run id for event; baseRun is the run gh names as the
// base branch's latest ("" for none); only, if given, names the steps to
// run. It returns the step summary and the id of the step that failed (""
// if none).
func (p *pipeline) run(id, event, baseSHA, baseRun string, only ...string) (summary, failed string) {
	t := p.t
	tmp := t.TempDir()
	files := map[string]string{}
	for _, f := range []string{"GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STEP_SUMMARY"} {
		files[f] = filepath.Join(tmp, f)
		write(t, files[f], "")
	}
	os.RemoveAll(filepath.Join(p.repo, "tandem-out"))
	os.RemoveAll(filepath.Join(p.repo, "tandem-base"))
	exec.Command("git", "-C", p.repo, "worktree", "prune").Run()
	env := map[string]string{"GITHUB_EVENT_NAME": event, "GITHUB_REPOSITORY": "o/r", "RUNNER_TEMP": tmp,
		"TANDEM_TEST_BASE_RUN": baseRun, "PATH": p.bin + ":" + os.Getenv("PATH")}
	for k, v := range files {
		env[k] = v
	}
	for k, v := range p.w.Env {
		env[k] = v
	}
	outputs := map[string]map[string]string{}
	expr := map[string]string{
		"github.event.pull_request.base.sha || github.sha": baseSHA,
		"github.token":    "token",
		"github.base_ref": "main",
		"github.ref":      "refs/heads/x",
		"runner.os":       "Linux",
	}
	eval := func(s string) string {
		return regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`).ReplaceAllStringFunc(s, func(m string) string {
			e := strings.TrimSpace(m[3 : len(m)-2])
			if v, ok := expr[e]; ok {
				return v
			}
			if k, ok := strings.CutPrefix(e, "env."); ok {
				return env[k]
			}
			if k, ok := strings.CutPrefix(e, "steps.baseline.outputs."); ok {
				return outputs["baseline"][k]
			}
			t.Fatalf("the emulator does not know ${{ %s }}", e)
			return ""
		})
	}
	steps := p.w.Jobs["tandem"].Steps
	if len(steps) == 0 {
		t.Fatal("no steps in job tandem")
	}
	for _, st := range steps {
		if len(only) > 0 && !slices.Contains(only, st.ID) {
			continue
		}
		ok := failed == ""
		switch st.If {
		case "":
		case "always()":
			ok = true
		case "github.event_name == 'pull_request'":
			ok = ok && event == "pull_request"
		case "github.event_name == 'pull_request' && steps.baseline.outputs.run_id != ''":
			ok = ok && event == "pull_request" && outputs["baseline"]["run_id"] != ""
		default:
			t.Fatalf("the emulator does not know if: %s", st.If)
		}
		if !ok {
			continue
		}
		with := map[string]string{}
		for k, v := range st.With {
			with[k] = eval(v)
		}
		var err error
		switch {
		case strings.HasPrefix(st.Uses, "actions/checkout@"), strings.HasPrefix(st.Uses, "actions/setup-go@"), strings.HasPrefix(st.Uses, "actions/cache@"):
		case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
			err = copyDir(filepath.Join(p.repo, with["path"]), filepath.Join(p.artifacts, id, with["name"]))
		case strings.HasPrefix(st.Uses, "actions/download-artifact@"):
			err = copyDir(filepath.Join(p.artifacts, with["run-id"], with["name"]), filepath.Join(p.repo, with["path"]))
		case st.Uses != "":
			t.Fatalf("the emulator does not know uses: %s", st.Uses)
		case st.ID == "install":
			// installing a released tandem needs the network: this test
			// binary is tandem here (on PATH since setup)
		default:
			// GitHub's default shell, bash -e {0}, not the bash -eo pipefail
			// the workflow asks for: no step may need pipefail to fail
			cmd := exec.Command("bash", "-e", "-c", st.Run)
			cmd.Dir = p.repo
			cmd.Env = os.Environ()
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			for k, v := range st.Env {
				cmd.Env = append(cmd.Env, k+"="+eval(v))
			}
			var out []byte
			out, err = cmd.CombinedOutput()
			t.Logf("run %s step %s:\n%s", id, st.ID, out)
		}
		if err != nil && failed == "" {
			t.Logf("run %s step %s failed: %v", id, st.ID, err)
			failed = st.ID
		}
		// what the step left for the next ones
		for _, line := range readLines(t, files["GITHUB_ENV"]) {
			if k, v, ok := strings.Cut(line, "="); ok {
				env[k] = v
			}
		}
		for _, line := range readLines(t, files["GITHUB_OUTPUT"]) {
			if k, v, ok := strings.Cut(line, "="); ok && st.ID != "" {
				if outputs[st.ID] == nil {
					outputs[st.ID] = map[string]string{}
				}
				outputs[st.ID][k] = v
			}
		}
		for _, line := range readLines(t, files["GITHUB_PATH"]) {
			env["PATH"] = line + ":" + env["PATH"]
		}
		for _, f := range []string{"GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH"} {
			write(t, files[f], "")
		}
	}
	b, err := os.ReadFile(files["GITHUB_STEP_SUMMARY"])
	if err != nil {
		t.Fatal(err)
	}
	return string(b), failed
}

func readLines(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func copyDir(from, to string) error {
	if _, err := os.Stat(from); err != nil {
		return fmt.Errorf("no artifact at %s: %w", from, err)
	}
	return os.CopyFS(to, os.DirFS(from))
}
