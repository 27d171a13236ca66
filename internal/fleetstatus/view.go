// SPDX-License-Identifier: Apache-2.0

// Package fleetstatus builds `mcs-gitops status`: the last commit's
// report (exporters, importers, conditions, endpoints per source, member
// health), who last changed each service, and a live read of every
// member (reachable, and whether each import it should hold is there with
// its addresses). It reads and never writes.
package fleetstatus

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcs-gitops/mcs-gitops/internal/rollout"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/member/doctor"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// View is the whole status.
type View struct {
	Commit   *gitsync.CommitInfo `json:"commit,omitempty"`
	Members  []Member            `json:"members"`
	Services []Service           `json:"services"`
	// Review is what the last commit records of review mode: held
	// imports, open proposals, rejections, overrides. Nil outside it.
	Review *layout.ReviewState `json:"review,omitempty"`
	// Rollouts are the staged rollouts the last commit records in
	// progress; nil when there are none.
	Rollouts *rollout.State `json:"rollouts,omitempty"`
}

// Member is one member's health.
type Member struct {
	Name      string `json:"name"`
	Reachable bool   `json:"reachable"`
	// Reason says why not, from the live read.
	Reason string `json:"reason,omitempty"`
	// Version is the apiserver's, when reachable.
	Version string `json:"version,omitempty"`
	// UnreachableSince is what the last commit recorded.
	UnreachableSince *time.Time `json:"unreachableSince,omitempty"`
	// Held is the withdrawal the guard holds, as the last commit recorded.
	Held *snapshot.HeldWithdrawal `json:"held,omitempty"`
	// Health is doctor's identity and CRD checks, when reachable.
	Health []doctor.Check `json:"health,omitempty"`
}

// Service is one exported service.
type Service struct {
	Namespace string     `json:"namespace"`
	Name      string     `json:"name"`
	Type      string     `json:"type,omitempty"`
	Exporters []Exporter `json:"exporters"`
	Importers []Importer `json:"importers"`
	// LastChange is the commit that last changed the service's status,
	// and Changed what it did to this service, in the change model's
	// words (the service's report in that commit against its parent's).
	LastChange *gitsync.CommitInfo `json:"lastChange,omitempty"`
	Changed    []string            `json:"changed,omitempty"`
	Warnings   []string            `json:"warnings,omitempty"`
}

// Exporter is one member's export.
type Exporter struct {
	Member     string             `json:"member"`
	Conditions []render.Condition `json:"conditions"`
	// ReadyEndpoints this member contributes.
	ReadyEndpoints int `json:"readyEndpoints"`
}

// Importer is one member that should hold the import.
type Importer struct {
	Member string `json:"member"`
	// Present is whether the member holds the ServiceImport now (false
	// when the member could not be read).
	Present bool     `json:"present"`
	IPs     []string `json:"ips,omitempty"`
	// NotServed is why the member gets the import without addresses.
	NotServed string `json:"notServed,omitempty"`
}

// Imported reports whether every importer holds the import, with
// addresses unless it is headless or not served there.
func (s Service) Imported() bool {
	for _, i := range s.Importers {
		if !i.Present || s.Type == "ClusterSetIP" && i.NotServed == "" && len(i.IPs) == 0 {
			return false
		}
	}
	return len(s.Importers) > 0
}

// Options say what to show.
type Options struct {
	// Config, when set, adds doctor's identity and CRD checks per member.
	Config  *v1alpha1.ClusterSet
	Repo    *gitsync.Repo
	Members *clusters.Set
	// Member and Service (namespace/name) filter, when set.
	Member, Service string
	// Depth bounds the history walked for LastChange.
	Depth int
}

// Build reads the last commit and the members.
func Build(ctx context.Context, o Options) (*View, error) {
	if o.Depth == 0 {
		o.Depth = 500
	}
	v := &View{}
	head, err := o.Repo.Head()
	if err != nil {
		return nil, err
	}
	var report *render.Report
	health := map[string]snapshot.Health{}
	if !head.IsZero() {
		info, err := o.Repo.Info(head)
		if err != nil {
			return nil, err
		}
		v.Commit = &info
		files, err := o.Repo.Files(head, layout.StatusDir)
		if err != nil {
			return nil, err
		}
		if report, err = layout.ReadReport(files); err != nil {
			return nil, fmt.Errorf("commit %s: %w", head.String()[:12], err)
		}
		if data, ok := files[layout.ReviewFile]; ok {
			if v.Review, err = layout.ParseReviewState(data); err != nil {
				return nil, fmt.Errorf("commit %s: %w", head.String()[:12], err)
			}
		}
		if data, ok := files[layout.RolloutsFile]; ok {
			if v.Rollouts, err = rollout.Parse(data); err != nil {
				return nil, fmt.Errorf("commit %s: %s: %w", head.String()[:12], layout.RolloutsFile, err)
			}
		}
		if data, ok := files[layout.HealthFile]; ok {
			if health, err = layout.ParseHealth(data); err != nil {
				return nil, fmt.Errorf("commit %s: %s: %w", head.String()[:12], layout.HealthFile, err)
			}
		}
	}
	live := readMembers(ctx, o.Members, o.Member)
	for _, m := range o.Members.Members() {
		if o.Member != "" && m.Name != o.Member {
			continue
		}
		lm := live[m.Name]
		mv := Member{Name: m.Name, Reachable: lm.err == nil, Version: lm.version}
		if lm.err != nil {
			mv.Reason = lm.err.Error()
		}
		if h, ok := health[m.Name]; ok && h.UnreachableSince != nil {
			t := h.UnreachableSince.Time.UTC()
			mv.UnreachableSince = &t
		}
		if h, ok := health[m.Name]; ok {
			mv.Held = h.Held
		}
		v.Members = append(v.Members, mv)
	}
	if o.Config != nil {
		addHealth(ctx, o, v.Members)
	}
	if report != nil {
		v.Services = services(report, live, o)
		if err := lastChanges(o.Repo, head, v.Services, o.Depth); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func services(report *render.Report, live map[string]liveMember, o Options) []Service {
	var out []Service
	for _, s := range report.Services {
		if o.Service != "" && s.Namespace+"/"+s.Name != o.Service {
			continue
		}
		sv := Service{Namespace: s.Namespace, Name: s.Name, Type: s.Type, Warnings: s.Warnings}
		for _, e := range s.Exports {
			if o.Member == "" || e.Member == o.Member {
				sv.Exporters = append(sv.Exporters, Exporter{Member: e.Member, Conditions: e.Conditions, ReadyEndpoints: s.Endpoints[e.Member]})
			}
		}
		notServed := map[string]string{}
		for _, n := range s.NotServed {
			notServed[n.Member] = n.Reason
		}
		for _, m := range s.ImportedBy {
			if o.Member != "" && m != o.Member {
				continue
			}
			imp := Importer{Member: m, NotServed: notServed[m]}
			if ips, ok := live[m].imports[s.Namespace+"/"+s.Name]; ok {
				imp.Present, imp.IPs = true, ips
			}
			sv.Importers = append(sv.Importers, imp)
		}
		if o.Member != "" && len(sv.Exporters) == 0 && len(sv.Importers) == 0 {
			continue
		}
		out = append(out, sv)
	}
	slices.SortFunc(out, func(a, b Service) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func lastChanges(repo *gitsync.Repo, head plumbing.Hash, svcs []Service, depth int) error {
	paths := make([]string, len(svcs))
	for i, s := range svcs {
		paths[i] = layout.ServiceStatusFile(s.Namespace, s.Name)
	}
	changed, err := repo.LastChanged(head, paths, depth)
	if err != nil {
		return err
	}
	for i := range svcs {
		c, ok := changed[paths[i]]
		if !ok {
			continue
		}
		svcs[i].LastChange = &c
		if svcs[i].Changed, err = serviceChange(repo, c, paths[i]); err != nil {
			return err
		}
	}
	return nil
}

// serviceChange says what commit c did to the service whose report is at
// path: the change model between its report there and in c's parent.
func serviceChange(repo *gitsync.Repo, c gitsync.CommitInfo, path string) ([]string, error) {
	report := func(rev string) (*render.Report, error) {
		if rev == "" {
			return &render.Report{}, nil
		}
		files, err := repo.Files(plumbing.NewHash(rev), path)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", rev[:12], err)
		}
		r, err := layout.ReadReport(files)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", rev[:12], err)
		}
		return r, nil
	}
	prev, err := report(c.Parent)
	if err != nil {
		return nil, err
	}
	next, err := report(c.Hash)
	if err != nil {
		return nil, err
	}
	return layout.ChangeEvents(prev, next), nil
}

// addHealth runs doctor's identity and CRD checks (discovery and one
// self review per member, no access reviews) on the reachable members.
func addHealth(ctx context.Context, o Options, members []Member) {
	var only []string
	for _, m := range members {
		if m.Reachable {
			only = append(only, m.Name)
		}
	}
	if len(only) == 0 {
		return
	}
	r := doctor.Run(ctx, doctor.Options{Config: o.Config, Members: o.Members, Only: only,
		Skip: []string{doctor.CheckPermissions, doctor.CheckCoreDNS, doctor.CheckDNSProbe}})
	byName := map[string][]doctor.Check{}
	for _, m := range r.Members {
		for _, c := range m.Checks {
			if c.Name == doctor.CheckIdentity || c.Name == doctor.CheckCRDs {
				byName[m.Name] = append(byName[m.Name], c)
			}
		}
	}
	for i := range members {
		members[i].Health = byName[members[i].Name]
	}
}
