// SPDX-License-Identifier: Apache-2.0

// Package corefile reads and edits a CoreDNS Corefile for one purpose: to
// make the kubernetes plugin answer a ClusterSet zone (clusterset.local)
// from ServiceImports, with its multicluster option. It is line-based and
// changes nothing else, so the diff a user is shown is the two lines it
// touches. It is pure: no I/O.
package corefile

import (
	"fmt"
	"slices"
	"strings"
)

// directive is one kubernetes plugin directive found in a Corefile.
type directive struct {
	line  int      // index of the `kubernetes ...` line
	zones []string // its zones, as written
	block bool     // the line opens a block
	end   int      // index of the block's closing line; == line without a block
	// multicluster is the index of its `multicluster` line, -1 when none,
	// and mcZones that line's zones.
	multicluster int
	mcZones      []string
}

// Serves reports whether a kubernetes plugin in the Corefile is
// authoritative for zone and lists it as a multicluster zone: what CoreDNS
// needs to answer <svc>.<ns>.svc.<zone> from ServiceImports.
func Serves(corefile, zone string) bool {
	for _, d := range directives(lines(corefile)) {
		if slices.Contains(d.zones, zone) && slices.Contains(d.mcZones, zone) {
			return true
		}
	}
	return false
}

// AddMulticluster returns the Corefile with zone added to the zones of its
// cluster's kubernetes plugin (the one for cluster.local, else the first)
// and to that plugin's multicluster option. A Corefile that already serves
// the zone comes back unchanged.
func AddMulticluster(corefile, zone string) (string, error) {
	if Serves(corefile, zone) {
		return corefile, nil
	}
	ls := lines(corefile)
	ds := directives(ls)
	if len(ds) == 0 {
		return "", fmt.Errorf("the Corefile has no kubernetes plugin to serve %s from", zone)
	}
	d := ds[0]
	for _, c := range ds {
		if slices.Contains(c.zones, "cluster.local") {
			d = c
			break
		}
	}
	indent := leading(ls[d.line])
	inner := indent + "    "
	if d.block && d.end > d.line+1 {
		inner = leading(ls[d.line+1])
	}
	out := slices.Clone(ls)
	zones := d.zones
	if !slices.Contains(zones, zone) {
		zones = append(slices.Clone(zones), zone)
	}
	// Rewritten whole, so that a brace the edit opens goes before the
	// line's comment.
	head := indent + strings.Join(append([]string{"kubernetes"}, zones...), " ") + " {"
	if c := comment(ls[d.line]); c != "" {
		head += " " + c
	}
	if d.block || !slices.Equal(zones, d.zones) {
		out[d.line] = head
	}
	switch {
	case d.multicluster >= 0:
		out[d.multicluster] = leading(ls[d.multicluster]) + strings.Join(append(append([]string{"multicluster"}, d.mcZones...), zone), " ")
	case d.block:
		out = slices.Insert(out, d.line+1, inner+"multicluster "+zone)
	default:
		out = slices.Insert(out, d.line+1, inner+"multicluster "+zone, indent+"}")
	}
	return strings.Join(out, "\n"), nil
}

func lines(s string) []string { return strings.Split(s, "\n") }

// directives finds every kubernetes plugin directive and its block.
func directives(ls []string) []directive {
	var out []directive
	for i := 0; i < len(ls); i++ {
		f := fields(ls[i])
		if len(f) == 0 || f[0] != "kubernetes" {
			continue
		}
		d := directive{line: i, end: i, multicluster: -1}
		for _, z := range f[1:] {
			if z == "{" {
				d.block = true
				break
			}
			d.zones = append(d.zones, z)
		}
		if d.block {
			depth := 1
			for j := i + 1; j < len(ls) && depth > 0; j++ {
				g := fields(ls[j])
				if depth == 1 && len(g) > 0 && g[0] == "multicluster" {
					d.multicluster = j
					d.mcZones = slices.DeleteFunc(slices.Clone(g[1:]), func(s string) bool { return s == "{" || s == "}" })
				}
				for _, t := range g {
					switch t {
					case "{":
						depth++
					case "}":
						depth--
					}
				}
				d.end = j
			}
			i = d.end
		}
		out = append(out, d)
	}
	return out
}

// fields splits a line into tokens without its comment, with braces as
// tokens of their own.
func fields(line string) []string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = strings.ReplaceAll(strings.ReplaceAll(line, "{", " { "), "}", " } ")
	return strings.Fields(line)
}

func comment(line string) string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		return line[i:]
	}
	return ""
}

func leading(line string) string {
	return line[:len(line)-len(strings.TrimLeft(line, " \t"))]
}
