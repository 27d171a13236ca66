// SPDX-License-Identifier: Apache-2.0

package fleetstatus

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcs-gitops/mcs-gitops/internal/rollout"

	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/internal/layout"
)

// WriteJSON and WriteYAML print the view for scripts.
func (v *View) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (v *View) WriteYAML(w io.Writer) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// WriteText prints the view for a person.
func (v *View) WriteText(w io.Writer) error {
	var b strings.Builder
	if v.Commit != nil {
		fmt.Fprintf(&b, "commit %s  %s  %s\n  %s\n\n", v.Commit.Hash[:12], v.Commit.When.Format(time.RFC3339), v.Commit.Author, v.Commit.Subject)
	} else {
		b.WriteString("no commit yet\n\n")
	}
	b.WriteString("MEMBERS\n")
	for _, m := range v.Members {
		switch {
		case m.Reachable && m.UnreachableSince != nil:
			fmt.Fprintf(&b, "  %-20s reachable (%s); the last commit records it unreachable since %s\n", m.Name, m.Version, m.UnreachableSince.Format(time.RFC3339))
		case m.Reachable:
			fmt.Fprintf(&b, "  %-20s reachable (%s)\n", m.Name, m.Version)
		case m.UnreachableSince != nil:
			fmt.Fprintf(&b, "  %-20s UNREACHABLE since %s: %s\n", m.Name, m.UnreachableSince.Format(time.RFC3339), m.Reason)
		default:
			fmt.Fprintf(&b, "  %-20s UNREACHABLE: %s\n", m.Name, m.Reason)
		}
		if h := m.Held; h != nil {
			wiped := ""
			if h.Wiped != "" {
				wiped = "; looks wiped: " + h.Wiped
			}
			fmt.Fprintf(&b, "  %-20s HELD: would withdraw %d of its %d exports at once (%s)%s; release with spec.sync.withdrawalGuard.release: [{member: %s, digest: %s}]\n",
				"", h.Withdrawn, h.Exported, strings.Join(h.Examples, ", "), wiped, m.Name, h.Digest)
		}
		for _, c := range m.Health {
			fmt.Fprintf(&b, "  %-20s %s %s: %s\n", "", c.Status, c.Name, c.Message)
			if c.Fix != "" {
				fmt.Fprintf(&b, "  %-20s   fix: %s\n", "", c.Fix)
			}
		}
	}
	b.WriteString("\nSERVICES\n")
	if len(v.Services) == 0 {
		b.WriteString("  none exported\n")
	}
	for _, s := range v.Services {
		state := "imported everywhere"
		if !s.Imported() {
			state = "NOT imported everywhere"
		}
		fmt.Fprintf(&b, "  %s/%s  %s, %s\n", s.Namespace, s.Name, orDash(s.Type), state)
		if s.LastChange != nil {
			what := s.LastChange.Subject
			if len(s.Changed) > 0 {
				what = strings.Join(s.Changed, "; ")
			}
			fmt.Fprintf(&b, "    last changed %s by %s in %s: %s\n", s.LastChange.When.Format(time.RFC3339), s.LastChange.Author, s.LastChange.Hash[:12], what)
		}
		for _, e := range s.Exporters {
			var conds []string
			for _, c := range e.Conditions {
				cs := c.Type + "=" + c.Status
				if c.Status != "True" && c.Type != "Conflict" || c.Type == "Conflict" && c.Status == "True" {
					cs += " (" + c.Reason + ")"
				}
				conds = append(conds, cs)
			}
			fmt.Fprintf(&b, "    exported by %-14s %d ready endpoint(s)  %s\n", e.Member, e.ReadyEndpoints, strings.Join(conds, " "))
		}
		for _, i := range s.Importers {
			switch {
			case !i.Present:
				fmt.Fprintf(&b, "    imported by %-14s MISSING (not in the member yet, or the member could not be read)\n", i.Member)
			case i.NotServed != "":
				fmt.Fprintf(&b, "    imported by %-14s without addresses: %s\n", i.Member, i.NotServed)
			default:
				fmt.Fprintf(&b, "    imported by %-14s %s\n", i.Member, orDash(strings.Join(i.IPs, ", ")))
			}
		}
		for _, wn := range s.Warnings {
			fmt.Fprintf(&b, "    warning: %s\n", wn)
		}
	}
	if r := v.Review; r != nil {
		writeReview(&b, r)
	}
	if r := v.Rollouts; r != nil && len(r.Rollouts) > 0 {
		writeRollouts(&b, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeReview prints what waits for a person in review mode.
func writeReview(b *strings.Builder, r *layout.ReviewState) {
	b.WriteString("\nREVIEW\n")
	if len(r.Proposals)+len(r.Rejected)+len(r.Overrides)+len(r.HeldImports) == 0 {
		b.WriteString("  nothing waits for approval\n")
	}
	for _, p := range r.Proposals {
		where := p.URL
		if where == "" {
			where = "request being opened on " + p.Branch
		}
		fmt.Fprintf(b, "  waiting   %s (%s): %s\n", p.Name, strings.Join(p.Kinds, ", "), where)
		for _, s := range p.Summary {
			fmt.Fprintf(b, "              %s\n", s)
		}
	}
	for _, p := range r.Rejected {
		fmt.Fprintf(b, "  rejected  %s: %s (held until the exports change)\n", p.Name, orDash(p.URL))
	}
	for _, o := range r.Overrides {
		fmt.Fprintf(b, "  declined  %s does not import %s/%s (taken out of a merged proposal; until the exports change)\n", o.Member, o.Namespace, o.Name)
	}
	for _, h := range r.HeldImports {
		fmt.Fprintf(b, "  held      %s/%s is not imported into %s yet\n", h.Namespace, h.Name, h.Member)
	}
}

// writeRollouts prints each staged rollout in progress: its wave, what
// stops it, who it has not reached.
func writeRollouts(b *strings.Builder, st *rollout.State) {
	b.WriteString("\nROLLOUTS\n")
	for _, r := range st.Rollouts {
		w := r.Current()
		state := fmt.Sprintf("wave %d of %d (%s)", r.Reached, len(r.Waves), w.Name)
		switch {
		case r.Aborted:
			state = "aborted: every member as before the change"
		case r.Paused != nil:
			state = r.Paused.String() + "; mcs-gitops rollout resume|abort " + r.Service
		}
		fmt.Fprintf(b, "  %s: %s\n", r.Service, state)
		if behind := r.Behind(); len(behind) > 0 {
			fmt.Fprintf(b, "    not yet in %s\n", strings.Join(behind, ", "))
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
