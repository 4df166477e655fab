package history

import (
	"context"
	"testing"
)

func TestDetectFromCI(t *testing.T) {
	gh := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_HEAD_REF": "fix-stall", "GITHUB_REF_NAME": "42/merge", "GITHUB_SHA": "abc",
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "7", "TANDEM_TESTBED": "runner-2core"}
	m := Detect(context.Background(), Meta{}, func(k string) string { return gh[k] })
	if m.Branch != "fix-stall" || m.Commit != "abc" || m.CIURL != "https://github.com/o/r/actions/runs/7" || m.Testbed != "runner-2core" {
		t.Errorf("GitHub Actions: %+v", m)
	}
	gl := map[string]string{"GITLAB_CI": "true", "CI_COMMIT_REF_NAME": "main", "CI_COMMIT_SHA": "def", "CI_JOB_URL": "https://gitlab/j/1"}
	m = Detect(context.Background(), Meta{Testbed: "given", Branch: "mine"}, func(k string) string { return gl[k] })
	if m.Branch != "mine" || m.Commit != "def" || m.CIURL != "https://gitlab/j/1" || m.Testbed != "given" {
		t.Errorf("GitLab, with a branch given: %+v", m)
	}
}
