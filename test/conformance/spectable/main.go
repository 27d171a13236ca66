// SPDX-License-Identifier: Apache-2.0

// Command spectable turns the conformance suite's Ginkgo JSON report into
// the Markdown table docs/conformance.md keeps per IP-family run: every
// spec, whether the suite requires it, how long it took and its result,
// sorted by name so that two runs' tables compare line by line.
//
// Usage: spectable [--stacks S] report.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// specReport is the part of Ginkgo's types.SpecReport the table needs (the
// suite's module is not a dependency of this one).
type specReport struct {
	ContainerHierarchyTexts  []string
	ContainerHierarchyLabels [][]string
	LeafNodeType             string
	LeafNodeText             string
	LeafNodeLabels           []string
	State                    string
	RunTime                  time.Duration
	Failure                  struct{ Message string }
}

type suiteReport struct {
	RunTime     time.Duration
	SpecReports []specReport
}

func main() {
	stacks := flag.String("stacks", "", "the members' IP families, for the table's heading")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: spectable [--stacks S] report.json")
		os.Exit(2)
	}
	b, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := write(os.Stdout, b, *stacks); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", flag.Arg(0), err)
		os.Exit(2)
	}
}

type row struct {
	name, level, result string
	took                time.Duration
}

func write(w io.Writer, report []byte, stacks string) error {
	var suites []suiteReport
	if err := json.Unmarshal(report, &suites); err != nil {
		return fmt.Errorf("not a Ginkgo JSON report: %w", err)
	}
	var rows []row
	var took time.Duration
	passed, total := map[string]int{}, map[string]int{}
	for _, s := range suites {
		took += s.RunTime
		for _, sp := range s.SpecReports {
			if sp.LeafNodeType != "It" {
				continue
			}
			var texts []string
			for _, t := range append(slices.Clone(sp.ContainerHierarchyTexts), sp.LeafNodeText) {
				if t = strings.TrimSpace(t); t != "" {
					texts = append(texts, t)
				}
			}
			r := row{name: strings.Join(texts, " › "), took: sp.RunTime}
			labels := slices.Concat(append(slices.Clone(sp.ContainerHierarchyLabels), sp.LeafNodeLabels)...)
			switch {
			case slices.Contains(labels, "Required"):
				r.level = "Required"
			case slices.Contains(labels, "Optional"):
				r.level = "Optional"
			default:
				r.level = "-"
			}
			r.result = sp.State
			if sp.State == "failed" || sp.State == "timedout" {
				msg, _, _ := strings.Cut(strings.TrimSpace(sp.Failure.Message), "\n")
				r.result += ": " + msg
			}
			if sp.State != "skipped" && sp.State != "pending" {
				total[r.level]++
				if sp.State == "passed" {
					passed[r.level]++
				}
			}
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return fmt.Errorf("no specs in the report")
	}
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.name, b.name) })
	all, allPassed := 0, 0
	for k := range total {
		all += total[k]
		allPassed += passed[k]
	}
	if stacks != "" {
		fmt.Fprintf(w, "Members: %s. ", stacks)
	}
	fmt.Fprintf(w, "**%d of %d pass** (Required %d of %d, Optional %d of %d) in %s.\n\n",
		allPassed, all, passed["Required"], total["Required"], passed["Optional"], total["Optional"], took.Round(time.Second))
	fmt.Fprintln(w, "| Spec | Level | Time | Result |")
	fmt.Fprintln(w, "|---|---|---:|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %.1f s | %s |\n", cell(r.name), r.level, r.took.Seconds(), cell(r.result))
	}
	return nil
}

// cell keeps a spec's text or failure from ending its table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
