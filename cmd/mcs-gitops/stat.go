// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// fileStat is one file's lines added and removed in a unified diff.
type fileStat struct {
	path          string
	added, erased int
}

// diffStat counts each file's added and removed lines, walking every hunk
// by the lengths its header gives, so a content line that looks like a
// header ("--- a/…" removed from a file) is counted as content.
func diffStat(patch string) []fileStat {
	var out []fileStat
	lines := strings.Split(patch, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "+++ "):
			path := strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
			if path == "/dev/null" && i > 0 {
				path = strings.TrimPrefix(strings.TrimPrefix(lines[i-1], "--- "), "a/")
			}
			out = append(out, fileStat{path: path})
		case strings.HasPrefix(l, "@@ ") && len(out) > 0:
			oldN, newN := hunkLengths(l)
			cur := &out[len(out)-1]
			for oldN > 0 || newN > 0 {
				i++
				if i >= len(lines) {
					break
				}
				switch c := lines[i]; {
				case strings.HasPrefix(c, "-"):
					cur.erased++
					oldN--
				case strings.HasPrefix(c, "+"):
					cur.added++
					newN--
				case strings.HasPrefix(c, `\`): // "\ No newline at end of file"
				default:
					oldN--
					newN--
				}
			}
		}
	}
	return out
}

// hunkLengths reads "@@ -a,b +c,d @@": b and d (1 when left out).
func hunkLengths(h string) (int, int) {
	f := strings.Fields(h)
	if len(f) < 3 {
		return 0, 0
	}
	n := func(r string) int {
		_, count, ok := strings.Cut(r[1:], ",")
		if !ok {
			return 1
		}
		v, _ := strconv.Atoi(count)
		return v
	}
	return n(f[1]), n(f[2])
}

// writeStat prints the stat as git diff --stat does: a line per file with
// a bar of at most 40 marks, then the totals.
func writeStat(w io.Writer, stats []fileStat) {
	width, most := 0, 0
	added, erased := 0, 0
	for _, s := range stats {
		width = max(width, len(s.path))
		most = max(most, s.added+s.erased)
		added += s.added
		erased += s.erased
	}
	for _, s := range stats {
		plus, minus := s.added, s.erased
		if most > 40 {
			plus, minus = (s.added*40+most-1)/most, (s.erased*40+most-1)/most
		}
		fmt.Fprintf(w, " %-*s | %4d %s%s\n", width, s.path, s.added+s.erased, strings.Repeat("+", plus), strings.Repeat("-", minus))
	}
	fmt.Fprintf(w, " %d file(s) changed, %d insertion(s)(+), %d deletion(s)(-)\n", len(stats), added, erased)
}
