package workspace

import (
	"os"
	"regexp"
	"testing"
)

// TestApprovalsTeamDocExamplesLoad: every YAML example of
// docs/approvals-team.md is a workspace that loads.
func TestApprovalsTeamDocExamplesLoad(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/approvals-team.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("no YAML examples found")
	}
	for i, b := range blocks {
		if _, err := Parse("docs/approvals-team.md", b[1]); err != nil {
			t.Errorf("example %d does not load: %v\n%s", i+1, err, b[1])
		}
	}
}
