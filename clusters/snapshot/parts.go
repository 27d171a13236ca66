// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ClusterPart is the name of the part of a formatted snapshot that holds
// the member-wide objects: ClusterProperties, ServiceCIDRs, Namespaces.
// No service part can have it: theirs hold a slash.
const ClusterPart = "cluster"

// Part is one part of a formatted snapshot: ClusterPart, or
// "<namespace>/<service>" for one service's objects.
type Part struct {
	Name string
	Data []byte
}

// PartName is the name of the part of service ns/name.
func PartName(ns, name string) string { return ns + "/" + name }

const partPrefix = "--- # "

func partMarker(name string) string { return partPrefix + name + "\n" }

// checkPartName refuses a part name that is not ClusterPart or a
// namespace and an object name: it becomes a path in the repository.
func checkPartName(name string) error {
	if name == ClusterPart {
		return nil
	}
	ns, key, ok := strings.Cut(name, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(key)) > 0 {
		return fmt.Errorf("snapshot part %q is not %s or <namespace>/<name>", name, ClusterPart)
	}
	return nil
}

// ComparePartNames orders parts as Format writes them: ClusterPart
// first, then by namespace, then by name (not by the joined string,
// where "a-b/x" would come before "a/x").
func ComparePartNames(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == ClusterPart:
		return -1
	case b == ClusterPart:
		return 1
	}
	ans, akey, _ := strings.Cut(a, "/")
	bns, bkey, _ := strings.Cut(b, "/")
	if c := strings.Compare(ans, bns); c != 0 {
		return c
	}
	return strings.Compare(akey, bkey)
}

// SplitParts cuts what Format wrote into its parts, in order; their
// Data joined again in ComparePartNames order are the same bytes. Data that does not
// start with a part marker, or names a part twice or out of order, was not
// written by Format and is refused.
func SplitParts(data []byte) ([]Part, error) {
	var parts []Part
	for len(data) > 0 {
		if !bytes.HasPrefix(data, []byte(partPrefix)) {
			return nil, fmt.Errorf("not a formatted snapshot: a part does not start with %q", strings.TrimSpace(partPrefix))
		}
		eol := bytes.IndexByte(data, '\n')
		if eol < 0 {
			return nil, fmt.Errorf("not a formatted snapshot: a part marker without a newline")
		}
		name := string(data[len(partPrefix):eol])
		if err := checkPartName(name); err != nil {
			return nil, err
		}
		if n := len(parts); n > 0 && ComparePartNames(parts[n-1].Name, name) >= 0 {
			return nil, fmt.Errorf("not a formatted snapshot: part %q after %q", name, parts[n-1].Name)
		}
		end := len(data)
		if next := bytes.Index(data[eol:], []byte("\n"+partPrefix)); next >= 0 {
			end = eol + next + 1
		}
		parts = append(parts, Part{Name: name, Data: data[:end]})
		data = data[end:]
	}
	return parts, nil
}
