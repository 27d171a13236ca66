// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Status is a check's outcome.
type Status string

// Outcomes, from best to worst.
const (
	OK      Status = "ok"
	Skipped Status = "skipped"
	Warning Status = "warning"
	Error   Status = "error"
)

// Check is one finding.
type Check struct {
	Name    string `json:"name"`
	Status  Status `json:"status"`
	Message string `json:"message"`
	// Fix says what to do, for a warning or an error.
	Fix string `json:"fix,omitempty"`
}

// Member is every finding about one member.
type Member struct {
	Name   string  `json:"name"`
	Checks []Check `json:"checks"`
}

// Report is doctor's answer.
type Report struct {
	Members  []Member `json:"members"`
	Errors   int      `json:"errors"`
	Warnings int      `json:"warnings"`
}

func (r *Report) count() {
	r.Errors, r.Warnings = 0, 0
	for _, m := range r.Members {
		for _, c := range m.Checks {
			switch c.Status {
			case Error:
				r.Errors++
			case Warning:
				r.Warnings++
			}
		}
	}
}

// WriteText prints the report for a person: one line per check, the fix
// indented under it.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, m := range r.Members {
		fmt.Fprintf(&b, "%s\n", m.Name)
		for _, c := range m.Checks {
			fmt.Fprintf(&b, "  %-4s %-12s %s\n", label(c.Status), c.Name, c.Message)
			if c.Fix != "" {
				fmt.Fprintf(&b, "       %-12s fix: %s\n", "", c.Fix)
			}
		}
	}
	fmt.Fprintf(&b, "%d error(s), %d warning(s)\n", r.Errors, r.Warnings)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the report for a script.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func label(s Status) string {
	switch s {
	case OK:
		return "ok"
	case Skipped:
		return "skip"
	case Warning:
		return "WARN"
	}
	return "FAIL"
}
