// SPDX-License-Identifier: Apache-2.0

package gitsync

import (
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// DiffFiles is the unified diff from one tree in memory to another, and
// what it changes: written (Added among them) and removed paths, sorted.
// It is what DiffTree is for a tree on disk, for two renders.
func DiffFiles(from, to map[string][]byte) (string, *Changes) {
	c := &Changes{}
	for p, b := range to {
		old, ok := from[p]
		switch {
		case !ok:
			c.Written = append(c.Written, p)
			c.Added = append(c.Added, p)
		case string(old) != string(b):
			c.Written = append(c.Written, p)
		}
	}
	for p := range from {
		if _, ok := to[p]; !ok {
			c.Removed = append(c.Removed, p)
		}
	}
	slices.Sort(c.Written)
	slices.Sort(c.Added)
	slices.Sort(c.Removed)
	var b strings.Builder
	diff := func(p string, have, want []byte, fromName, toName string) {
		text, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(have)), B: difflib.SplitLines(string(want)),
			FromFile: fromName, ToFile: toName, Context: 3,
		})
		b.WriteString(text)
	}
	for _, p := range c.Written {
		fromName := "a/" + p
		if _, ok := from[p]; !ok {
			fromName = "/dev/null"
		}
		diff(p, from[p], to[p], fromName, "b/"+p)
	}
	for _, p := range c.Removed {
		diff(p, from[p], nil, "a/"+p, "/dev/null")
	}
	return b.String(), c
}
