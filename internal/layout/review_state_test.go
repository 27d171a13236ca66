// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// status/review.yaml is read from the branch, which people push to. The
// loop pushes to, deletes and closes requests of the branches its
// proposal records name, so a record may only ever name a proposal
// branch: one edited to name a release branch, or someone's pull
// request, is refused, not acted on.
func TestParseReviewStateRefusesBranchesThatAreNotProposals(t *testing.T) {
	for name, doc := range map[string]string{
		"another branch":     "proposals:\n- name: service/demo/web\n  branch: release\n  kinds: [Export]\n  digest: d\n",
		"the base branch":    "proposals:\n- name: service/demo/web\n  branch: main\n  kinds: [Export]\n  digest: d\n",
		"another proposal":   "proposals:\n- name: service/demo/web\n  branch: mcs-gitops/proposals/service/demo/api\n  kinds: [Export]\n  digest: d\n",
		"a path out":         "proposals:\n- name: service/../../main\n  branch: mcs-gitops/proposals/service/../../main\n  kinds: [Export]\n  digest: d\n",
		"an unknown kind":    "proposals:\n- name: feature/x\n  branch: mcs-gitops/proposals/feature/x\n  kinds: [Export]\n  digest: d\n",
		"too few segments":   "proposals:\n- name: service/demo\n  branch: mcs-gitops/proposals/service/demo\n  kinds: [Export]\n  digest: d\n",
		"an empty segment":   "proposals:\n- name: policy/cluster-1//web\n  branch: mcs-gitops/proposals/policy/cluster-1//web\n  kinds: [Policy]\n  digest: d\n",
		"upper case":         "proposals:\n- name: member/Cluster-1\n  branch: mcs-gitops/proposals/member/Cluster-1\n  kinds: [Member]\n  digest: d\n",
		"a ref-breaking dot": "proposals:\n- name: member/cluster-1.lock\n  branch: mcs-gitops/proposals/member/cluster-1.lock\n  kinds: [Member]\n  digest: d\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseReviewState([]byte(doc))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), ReviewFile+": proposals[0]"), "names the file and the record: %v", err)
		})
	}
}

func TestParseReviewStateAcceptsEveryProposalShape(t *testing.T) {
	var doc strings.Builder
	doc.WriteString("proposals:\n")
	for _, n := range []string{"service/demo/web", "import/cluster-2/demo", "policy/cluster-1/demo/web", "member/eu-west-7"} {
		doc.WriteString("- name: " + n + "\n  branch: " + ProposalBranch(n) + "\n  kinds: [Export]\n  digest: d\n")
	}
	r, err := ParseReviewState([]byte(doc.String()))
	require.NoError(t, err)
	require.Len(t, r.Proposals, 4)
	for _, p := range r.Proposals {
		assert.Equal(t, "mcs-gitops/proposals/"+p.Name, p.Branch)
	}
}

// FuzzParseReviewState: whatever a person pushes as status/review.yaml,
// what loads names only proposal branches, and writes back to bytes that
// load to the same record (the loop rewrites it every commit).
func FuzzParseReviewState(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("proposals:\n- name: service/demo/web\n  branch: mcs-gitops/proposals/service/demo/web\n  kinds: [Export, Import]\n  digest: d\n  url: https://forge.example/o/r/pulls/1\n  number: 1\n"))
	f.Add([]byte("heldImports:\n- member: cluster-2\n  namespace: demo\n  name: web\nrejected:\n- name: service/demo/db\n  digest: x\noverrides:\n- member: cluster-2\n  namespace: demo\n  name: web\n  digest: y\n"))
	f.Add([]byte("proposals:\n- name: member/cluster-4\n  branch: release\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseReviewState(data)
		if err != nil {
			return
		}
		for _, p := range r.Proposals {
			if p.Branch != ProposalBranch(p.Name) || checkProposalName(p.Name) != nil {
				t.Fatalf("loaded a record naming branch %q for %q", p.Branch, p.Name)
			}
		}
		b, err := FormatReviewState(r)
		if err != nil {
			t.Fatalf("format: %v", err)
		}
		again, err := ParseReviewState(b)
		if err != nil {
			t.Fatalf("what was written does not load: %v\n%s", err, b)
		}
		b2, err := FormatReviewState(again)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("not stable: %v\n%s\n---\n%s", err, b, b2)
		}
	})
}
