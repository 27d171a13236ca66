// SPDX-License-Identifier: Apache-2.0

// Package browser opens pages in a real browser, Debian's Chromium driven
// by playwright-core under Node (`make testbin` installs both, the driver
// into TESTBIN/browser), and reports what the page's own JavaScript drew:
// the check that a Mermaid picture a forge shows is really drawn, not only
// parsed. It must not be imported by production code.
package browser

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/test/nodejs"
)

//go:embed page.mjs
var pageScript []byte

// Page is what a page showed.
type Page struct {
	// Diagrams are the Mermaid diagrams drawn, in page order.
	Diagrams []Diagram `json:"diagrams"`
	// Errors are the errors the page showed in place of a diagram;
	// Problems what went wrong loading it (script errors, time-outs).
	Errors   []string `json:"errors"`
	Problems []string `json:"problems"`
	// PNG is a screenshot of the selected element.
	PNG []byte `json:"-"`
}

// Diagram is one drawn Mermaid diagram.
type Diagram struct {
	SVG   bool   `json:"svg"`
	Nodes int    `json:"nodes"`
	Edges int    `json:"edges"`
	Text  string `json:"text"`
}

// Open loads url in headless Chromium, waits for its Mermaid diagrams and
// screenshots the element selector selects. Where Chromium or the driver
// is missing the test is skipped with the reason, and fails under CI=true.
func Open(t testing.TB, url, selector string) Page {
	t.Helper()
	dir, err := prepare(t)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("browser: %v", err)
		}
		t.Skipf("skipping: browser: %v", err)
	}
	png := filepath.Join(dir, "shot.png")
	cmd := exec.Command("node", filepath.Join(dir, "page.mjs"), url, selector, png)
	// Chromium keeps its profile in HOME; a fresh one per run.
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("browser: node: %v: %s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("browser: %s", stderr.String())
	}
	var p Page
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("browser: answer %q: %v", out, err)
	}
	if p.PNG, err = os.ReadFile(png); err != nil && len(p.Problems) == 0 {
		t.Fatalf("browser: no screenshot: %v", err)
	}
	return p
}

// prepare lays out the script; Chromium must be where the driver looks.
func prepare(t testing.TB) (string, error) {
	chromium := "/usr/bin/chromium"
	if c := os.Getenv("CHROMIUM"); c != "" {
		chromium = c
	}
	if _, err := os.Stat(chromium); err != nil {
		return "", fmt.Errorf("no Chromium at %s (make testbin installs Debian's chromium)", chromium)
	}
	return nodejs.Script(t, "browser", []string{"playwright-core"}, "page.mjs", pageScript)
}
