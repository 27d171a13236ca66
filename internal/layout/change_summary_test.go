// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// The review says what the commit message says, per member, and lists every
// member asked for, in that order, changed or not; text from a condition
// cannot turn into Markdown or HTML.
func TestReviewMarkdown(t *testing.T) {
	prev := &render.Report{Services: []render.ServiceReport{
		{Namespace: "web", Name: "api", Type: "ClusterSetIP", Exports: []render.ExportReport{export("cluster-1", "")},
			ImportedBy: []string{"cluster-1", "cluster-3"}},
	}}
	conflicted := export("cluster-3", "PortConflict")
	conflicted.Conditions[1].Message = "port *http* <b>8080</b> | not `8000`"
	next := &render.Report{Services: []render.ServiceReport{
		{Namespace: "httpbin", Name: "httpbin", Type: "ClusterSetIP", Exports: []render.ExportReport{export("cluster-1", "")},
			ImportedBy: []string{"cluster-3"}},
		{Namespace: "web", Name: "api", Type: "ClusterSetIP", Exports: []render.ExportReport{export("cluster-1", ""), conflicted},
			ImportedBy: []string{"cluster-1"}},
	}}
	changes := &Changes{Written: []string{"clusters/cluster-1/web/api/serviceimport.yaml"}}
	r := NewChangeSummary(prev, next, changes, []string{"cluster-3", "cluster-2", "cluster-1"})
	assert.Equal(t, []MemberChange{
		{Member: "cluster-3", Added: []string{"httpbin/httpbin"}, Removed: []string{"web/api"}, Changed: []string{}},
		{Member: "cluster-2", Added: []string{}, Removed: []string{}, Changed: []string{}},
		{Member: "cluster-1", Added: []string{}, Removed: []string{}, Changed: []string{"web/api"}},
	}, r.Members)
	want := "## mcs-gitops: cluster-1 exports httpbin/httpbin to cluster-3; +2 more\n\n" +
		"- cluster-1 exports httpbin/httpbin to cluster-3\n" +
		"- remove web/api from cluster-3\n" +
		"- conflict on web/api\n\n" +
		"| member | imports added | imports removed | imports changed | problems |\n|---|---:|---:|---:|---:|\n" +
		"| cluster-3 | 1 | 1 | 0 | 1 |\n" +
		"| cluster-2 | 0 | 0 | 0 | 0 |\n" +
		"| cluster-1 | 0 | 0 | 1 | 0 |\n" +
		"\n```mermaid\nflowchart LR\n  m1[\"cluster-3\"]\n  m3[\"cluster-1\"]\n  m1 -->|\"web/api\"| m3\n```\n" +
		"\n### cluster-3\n\n- import added: `httpbin/httpbin`\n- import removed: `web/api`\n" +
		"\n### cluster-1\n\n- import changed: `web/api`\n" +
		"\n### Problems (1)\n\n" +
		"- **Conflict** web/api from cluster-3: PortConflict: port \\*http\\* &lt;b&gt;8080&lt;/b&gt; \\| not \\`8000\\`\n"
	assert.Equal(t, want, r.Markdown())
	assert.Equal(t, want, NewChangeSummary(prev, next, changes, []string{"cluster-3", "cluster-2", "cluster-1"}).Markdown())

	none := NewChangeSummary(next, next, nil, []string{"cluster-1"})
	assert.Equal(t, "", none.Subject)
	assert.Contains(t, none.Markdown(), "## mcs-gitops: no change\n\n| member |")
}

// A change of 2,500 services across 20 members, with conflicts: the
// summary keeps itself under GitHub's limits for a step summary and for a
// pull request comment, folds each member, says how many lines it left
// out, and is the same bytes twice.
func TestLargeChangeSummaryFits(t *testing.T) {
	var members []string
	for i := 1; i <= 20; i++ {
		members = append(members, fmt.Sprintf("cluster-%d", i))
	}
	next := &render.Report{}
	for i := range 2500 {
		s := render.ServiceReport{Namespace: fmt.Sprintf("team-%d", i%50), Name: fmt.Sprintf("svc-%d", i), Type: "ClusterSetIP",
			ImportedBy: members, Exports: []render.ExportReport{export(members[i%20], ""), export(members[(i+1)%20], "")}}
		if i%10 == 0 {
			s.Exports[1] = export(members[(i+1)%20], "PortConflict")
		}
		next.Services = append(next.Services, s)
	}
	sum := NewChangeSummary(&render.Report{}, next, nil, members)
	full := sum.MarkdownWithin(1 << 30)
	for _, limit := range []int{StepSummaryLimit, CommentLimit} {
		md := sum.MarkdownWithin(limit)
		assert.LessOrEqual(t, len(md), limit)
		assert.Contains(t, md, "| cluster-20 | 2500 | 0 | 0 |", "the per-member table is always there")
		assert.Contains(t, md, "more", "what was left out is counted")
		assert.Contains(t, md, "**In all:** 2500 services reachable from more members (50000 member-service pairs); 250 services with a new conflict.",
			"a change too long to list opens with its totals")
		assert.Equal(t, md, sum.MarkdownWithin(limit))
		t.Logf("limit %d: %d bytes (uncut: %d)", limit, len(md), len(full))
	}
	assert.Contains(t, sum.MarkdownWithin(StepSummaryLimit),
		"<details><summary>cluster-1, cluster-2, cluster-3, cluster-4 and 16 more (20 members, the same in each): 2500 added, 0 removed, 0 changed</summary>\n\n- import added: `team-0/svc-0`\n",
		"members whose imports change the same way are one list")
}
