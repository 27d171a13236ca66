// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// readKind is a kind a snapshot reads, and the versions it takes.
type readKind struct {
	group, kind string
	versions    []string // nil: any
}

// readKinds are the kinds a snapshot reads; every other kind is skipped,
// so a whole `kubectl get -A -o yaml` can be pasted in, unless it is a
// near miss of one of these (nearMiss).
var readKinds = []readKind{
	{"", "Namespace", []string{"v1"}},
	{"", "Service", []string{"v1"}},
	{networkingv1.GroupName, "ServiceCIDR", []string{"v1"}},
	{discoveryv1.GroupName, "EndpointSlice", []string{"v1"}},
	{mcsv1alpha1.GroupName, "ServiceExport", []string{"v1alpha1", "v1beta1"}},
	{v1alpha1.Group, v1alpha1.GlobalTrafficPolicyKind, []string{"v1alpha1"}},
	{v1alpha1.Group, RejectedKind, []string{"v1alpha1"}},
	{"about.k8s.io", "ClusterProperty", nil},
}

// mcsSkipped are the other kinds of the MCS group a pasted snapshot may
// hold: the ServiceImports mcs-gitops itself renders.
var mcsSkipped = []string{"ServiceImport"}

// versionProblem says why apiVersion is not one a read kind is taken in,
// "" when it is (or the kind is not read).
func versionProblem(group, apiVersion, kind string) string {
	for _, k := range readKinds {
		if k.group != group || k.kind != kind || k.versions == nil {
			continue
		}
		version := apiVersion
		if group != "" {
			version = strings.TrimPrefix(apiVersion, group+"/")
		}
		if slices.Contains(k.versions, version) {
			return ""
		}
		use := make([]string, len(k.versions))
		for i, v := range k.versions {
			use[i] = v
			if group != "" {
				use[i] = group + "/" + v
			}
		}
		return fmt.Sprintf("apiVersion %s is not supported, use %s", apiVersion, strings.Join(use, " or "))
	}
	return ""
}

// nearMiss says what an object of a kind the snapshot does not read was
// probably meant to be: a kind of the MCS group other than the ones it
// knows, a read kind misspelt, in another case or in the plural, or a read
// kind in a misspelt group. Skipping such an object silently made an
// export vanish from the render. "" when the kind is simply not read.
func nearMiss(group, kind string) string {
	if group == mcsv1alpha1.GroupName {
		if slices.Contains(mcsSkipped, kind) {
			return ""
		}
		if misspelt(kind, "ServiceExport") {
			return fmt.Sprintf("kind %s: did you mean ServiceExport?", kind)
		}
		return fmt.Sprintf("kind %s is not a kind of %s a snapshot reads (ServiceExport; ServiceImport is skipped)", kind, group)
	}
	for _, k := range readKinds {
		sameGroup := group == k.group
		nearGroup := k.group != "" && !sameGroup && withinEdits(group, k.group, 3)
		switch {
		case sameGroup && misspelt(kind, k.kind):
			return fmt.Sprintf("kind %s is not a kind a snapshot reads: did you mean %s?", kind, k.kind)
		case nearGroup && (kind == k.kind || misspelt(kind, k.kind)):
			return fmt.Sprintf("%s in group %s: did you mean %s?", kind, group, k.group)
		}
	}
	return ""
}

// misspelt reports whether kind is a likely misspelling of want: the same
// but for case, a plural, or (for names long enough that it is not a
// different word) two edits away.
func misspelt(kind, want string) bool {
	switch {
	case kind == want:
		return false
	case strings.EqualFold(kind, want), strings.EqualFold(kind, want+"s"), strings.EqualFold(kind, want+"es"):
		return true
	}
	return len(want) >= 8 && withinEdits(strings.ToLower(kind), strings.ToLower(want), 2)
}

// withinEdits reports whether a and b are at most n edits apart. Strings
// whose lengths differ by more cannot be, and are not compared: a hostile
// kind or group of a megabyte would cost a megabyte times the other's
// length for every object.
func withinEdits(a, b string, n int) bool {
	if d := len(a) - len(b); d > n || -d > n {
		return false
	}
	return editDistance(a, b) <= n
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
