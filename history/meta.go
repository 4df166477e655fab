package history

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Detect fills what it can of a run's filing from the environment: a CI
// system's variables (GitHub Actions, GitLab CI), else git in the current
// directory; the testbed is TANDEM_TESTBED or the host's name. Fields
// already set in m are kept.
func Detect(ctx context.Context, m Meta, env func(string) string) Meta {
	if env == nil {
		env = os.Getenv
	}
	first := func(vals ...string) string {
		for _, v := range vals {
			if v != "" {
				return v
			}
		}
		return ""
	}
	switch {
	case env("GITHUB_ACTIONS") == "true":
		m.Branch = first(m.Branch, env("GITHUB_HEAD_REF"), env("GITHUB_REF_NAME"))
		m.Commit = first(m.Commit, env("GITHUB_SHA"))
		if m.CIURL == "" && env("GITHUB_RUN_ID") != "" {
			m.CIURL = env("GITHUB_SERVER_URL") + "/" + env("GITHUB_REPOSITORY") + "/actions/runs/" + env("GITHUB_RUN_ID")
		}
	case env("GITLAB_CI") == "true":
		m.Branch = first(m.Branch, env("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"), env("CI_COMMIT_REF_NAME"))
		m.Commit = first(m.Commit, env("CI_COMMIT_SHA"))
		m.CIURL = first(m.CIURL, env("CI_JOB_URL"))
	}
	if m.Branch == "" || m.Commit == "" {
		git := func(args ...string) string {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, "git", args...).Output()
			if err != nil {
				return ""
			}
			return strings.TrimSpace(string(out))
		}
		if m.Commit == "" {
			if m.Commit = git("rev-parse", "HEAD"); m.Commit != "" {
				m.Dirty = m.Dirty || git("status", "--porcelain", "--untracked-files=no") != ""
			}
		}
		if b := git("rev-parse", "--abbrev-ref", "HEAD"); m.Branch == "" && b != "HEAD" {
			m.Branch = b
		}
	}
	if m.Testbed == "" {
		m.Testbed = env("TANDEM_TESTBED")
		if m.Testbed == "" {
			m.Testbed, _ = os.Hostname()
		}
	}
	return m
}
