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
		b.WriteString(unified(have, want, fromName, toName))
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

// unified is the unified diff of two files, as git apply takes it: a new
// file's hunk starts at -0,0 and no file gets a line it does not have.
// difflib's SplitLines ends every text with an empty line, which made
// each hunk one context line longer than the file and a new file's
// range -1 rather than -0,0: git apply refused the patch.
func unified(have, want []byte, fromName, toName string) string {
	text, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(have), B: lines(want), FromFile: fromName, ToFile: toName, Context: 3,
	})
	return text
}

// lines splits text into lines that keep their newline; a last line
// without one gets git's marker, so the patch says so.
func lines(text []byte) []string {
	var out []string
	for s := string(text); s != ""; {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s+"\n\\ No newline at end of file\n")
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}
