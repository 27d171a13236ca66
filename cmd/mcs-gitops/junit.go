// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/xml"
	"io"
	"slices"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// junitSuites is -o junit: a JUnit XML report, which GitLab shows in a
// merge request and most CI systems read. Each service of the world after
// the change is a test case; it fails when it has a problem or a change of
// a kind --fail-on names, and what else it has goes to its system-out.
// Snapshot files' warnings are one case, "snapshot files".
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes the report for the services of report, their problems
// and the change's findings.
func writeJUnit(w io.Writer, report *render.Report, problems []render.Problem, set change.Set, fail *failOn) error {
	type lines struct{ failed, other []string }
	byService := map[string]*lines{}
	var keys []string
	get := func(k string) *lines {
		if byService[k] == nil {
			byService[k] = &lines{}
			keys = append(keys, k)
		}
		return byService[k]
	}
	if report != nil {
		for _, s := range report.Services {
			get(s.Namespace + "/" + s.Name)
		}
	}
	// add files one problem or change under its case: a failure when
	// --fail-on names its kind, the case's output otherwise.
	add := func(k, kind, line string, failed bool) {
		l := get(k)
		line = kind + ": " + line
		if failed {
			l.failed = append(l.failed, line)
		} else {
			l.other = append(l.other, line)
		}
	}
	for _, p := range problems {
		k := p.Namespace + "/" + p.Name
		if p.Name == "" {
			k = "snapshot files"
		}
		add(k, string(p.Kind), p.String(), fail.problems[p.Kind])
	}
	for _, f := range set.Findings() {
		k := f.Service
		if k == "" {
			k = "members"
		}
		add(k, string(f.Kind), f.String(), fail.changes[f.Kind])
	}
	slices.Sort(keys)
	suite := junitSuite{Name: "mcs-gitops"}
	for _, k := range keys {
		l := byService[k]
		c := junitCase{Name: k, ClassName: "mcs-gitops", SystemOut: strings.Join(l.other, "\n")}
		if len(l.failed) > 0 {
			c.Failure = &junitFailure{Message: l.failed[0], Type: strings.SplitN(l.failed[0], ":", 2)[0], Text: strings.Join(l.failed, "\n")}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	out := junitSuites{Name: "mcs-gitops", Tests: suite.Tests, Failures: suite.Failures, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
