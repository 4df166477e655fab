package workflow_test

import (
	"fmt"
	"strings"

	"github.com/tandem-bench/tandem/workflow"
)

func ExampleGitHub() {
	out, err := workflow.GitHub(workflow.Config{Study: "bench/study.yaml", TandemVersion: "v0.2.0", MaxRegression: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "run: tandem run") || strings.HasPrefix(line, "tandem compare") {
			fmt.Println(line)
		}
	}
	// Output:
	// run: tandem run "$TANDEM_STUDY" --out "$TANDEM_OUT"
	// tandem compare tandem-base/results.json "$TANDEM_OUT/results.json" \
}
