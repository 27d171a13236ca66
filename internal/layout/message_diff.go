// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/change"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// svcDiff is how one service changed between two reports.
type svcDiff struct {
	key                       string // namespace/name
	prev, next                *render.ServiceReport
	change                    change.Service
	importsAdded, importsGone []string
	exportsAdded, exportsGone []string
	newlyInvalid              []string          // "member (Reason)"
	invalidNow                map[string]string // member -> reason, newly invalid only
	conflictNew, conflictGone bool
	// stopped and resumed are the exporters that stop serving the
	// service while still exporting it (every port lost a conflict), or
	// serve it again.
	stopped, resumed []string
	// pending are the exports review mode holds back for approval.
	pending []string
	// dropped and restored are the exports of members that go stale or
	// come back from it: said by the member's event, not as exports.
	dropped, restored []string
	endpoints         []string // "member a -> b"
	changedIn         []string // importers with files changed
	// policies are the consumers whose traffic policy now sends them
	// elsewhere: "cluster-2 (FailOver): cluster-2 -> cluster-1".
	policies []string
	// fields are how the merged import changed, old -> new
	// (importChanges).
	fields []string
}

type reportDiff struct {
	// members are the members whose state changes.
	members  []change.Member
	services []*svcDiff
	// gateways are how the members' gateways change.
	gateways []change.Gateway
}

// diffReports says how next differs from prev. only, when not nil, are
// the services whose reports may differ; the others are taken as
// unchanged.
func diffReports(prev, next *render.Report, c *Changes, members []change.Member, only map[string]bool) *reportDiff {
	idx := func(r *render.Report) map[string]*render.ServiceReport {
		m := map[string]*render.ServiceReport{}
		if r != nil {
			for i := range r.Services {
				s := &r.Services[i]
				m[s.Namespace+"/"+s.Name] = s
			}
		}
		return m
	}
	p, n := idx(prev), idx(next)
	touched := touchedImports(c)
	d := &reportDiff{gateways: change.GatewaysBetween(prev, next), members: members}
	dropped, restored := map[string]bool{}, map[string]bool{}
	for _, m := range members {
		dropped[m.Name], restored[m.Name] = m.Dropped(), m.Restored()
	}
	for _, k := range unionKeys(p, n) {
		s := &svcDiff{key: k, prev: p[k], next: n[k]}
		if only == nil || only[k] || s.prev == nil || s.next == nil {
			s.change = change.ServiceBetween(s.prev, s.next)
		} else {
			s.change = change.Service{Namespace: s.next.Namespace, Name: s.next.Name}
		}
		s.importsAdded, s.importsGone = s.change.Gained, s.change.Lost
		s.invalidNow = map[string]string{}
		valid := func(st change.ExportState) bool {
			return st == change.Valid || st == change.NotReady || st == change.PendingReview
		}
		for _, e := range s.change.Exports {
			switch {
			case e.New == change.PendingReview && e.Old != change.Valid:
				// Held by review mode: said by the proposal, not as an
				// export that stopped serving.
				s.pending = append(s.pending, e.Member)
			case e.Old == change.PendingReview && e.New.Serving():
				s.exportsAdded = append(s.exportsAdded, e.Member)
			case e.New != "" && !valid(e.New) && (e.Old == "" || valid(e.Old)):
				// A new export that is invalid is reported as invalid, not
				// as an export.
				s.newlyInvalid = append(s.newlyInvalid, fmt.Sprintf("%s (%s)", e.Member, e.New))
				s.invalidNow[e.Member] = string(e.New)
			case e.Old == "" && valid(e.New) && restored[e.Member]:
				s.restored = append(s.restored, e.Member)
			case e.Old == "" && valid(e.New):
				s.exportsAdded = append(s.exportsAdded, e.Member)
				if e.New == change.NotReady {
					s.stopped = append(s.stopped, e.Member) // new, and serving nothing
				}
			case e.New == "" && dropped[e.Member]:
				s.dropped = append(s.dropped, e.Member)
			case e.New == "":
				s.exportsGone = append(s.exportsGone, e.Member)
			case e.Old == change.Valid && e.New == change.NotReady:
				s.stopped = append(s.stopped, e.Member)
			case e.Old == change.NotReady && e.New == change.Valid:
				s.resumed = append(s.resumed, e.Member)
			}
		}
		pc, nc := conflicted(s.prev), conflicted(s.next)
		s.conflictNew, s.conflictGone = nc && !pc, pc && !nc
		for _, ec := range s.change.Endpoints {
			s.endpoints = append(s.endpoints, fmt.Sprintf("%s %d -> %d", ec.Member, ec.Old, ec.New))
		}
		s.policies = policyLines(s.change.Policies)
		s.fields = fieldLines(s.change.Fields)
		added := toSet(s.importsAdded)
		for _, m := range importers(s.next) {
			if touched[m+"/"+k] && !added[m] {
				s.changedIn = append(s.changedIn, m)
			}
		}
		d.services = append(d.services, s)
	}
	return d
}

// events lists what happened, most important first, for the subject.
func (d *reportDiff) events() []string {
	// A member whose change moves exports (joining, leaving, going stale,
	// coming back from it) is the cause of what follows and is said first;
	// one that only goes unreachable or comes back keeps its exports, and
	// is said last.
	var members, health []string
	for _, m := range d.members {
		if m.MovesExports() {
			members = append(members, m.Short())
		} else {
			health = append(health, m.Short())
		}
	}
	var imports, removes, fields, policies, conflicts, invalids, exports, endpoints []string
	for _, s := range d.services {
		for i, p := range s.policies {
			member, how, _ := strings.Cut(p, " ")
			if c := s.change.Policies[i]; c.Old != nil && c.New != nil && c.Old.Mode != c.New.Mode {
				// The subject names the modes; the body says where each sends traffic.
				how = c.Old.Mode + " -> " + c.New.Mode
			}
			policies = append(policies, fmt.Sprintf("reroute %s in %s %s", s.key, member, how))
		}
		if len(s.importsAdded) > 0 {
			imports = append(imports, s.importEvent())
		}
		if len(s.importsGone) > 0 {
			removes = append(removes, fmt.Sprintf("remove %s from %s", s.key, list(s.importsGone)))
		}
		if len(s.fields) > 0 {
			fields = append(fields, fmt.Sprintf("change %s: %s", s.key, list(s.fields)))
		}
		newExport := func(m string) bool { return slices.Contains(s.exportsAdded, m) }
		switch {
		case s.conflictNew && len(s.stopped) > 0 && newExport(s.stopped[0]) && len(s.stopped) == 1:
			conflicts = append(conflicts, fmt.Sprintf("conflict on %s: %s's new export serves nothing", s.key, s.stopped[0]))
		case s.conflictNew && len(s.stopped) > 0:
			conflicts = append(conflicts, fmt.Sprintf("conflict on %s: %s no longer %s it", s.key, list(s.stopped), serves(s.stopped)))
		case s.conflictNew:
			conflicts = append(conflicts, "conflict on "+s.key)
		case len(s.stopped) > 0:
			conflicts = append(conflicts, fmt.Sprintf("%s no longer %s %s", list(s.stopped), serves(s.stopped), s.key))
		}
		switch {
		case s.conflictGone && len(s.resumed) > 0:
			conflicts = append(conflicts, fmt.Sprintf("conflict resolved on %s: %s %s it again", s.key, list(s.resumed), serves(s.resumed)))
		case s.conflictGone:
			conflicts = append(conflicts, "conflict resolved on "+s.key)
		case len(s.resumed) > 0:
			conflicts = append(conflicts, fmt.Sprintf("%s %s %s again", list(s.resumed), serves(s.resumed), s.key))
		}
		if len(s.pending) > 0 {
			exports = append(exports, fmt.Sprintf("%s's export of %s waits for review", list(s.pending), s.key))
		}
		if len(s.newlyInvalid) > 0 {
			invalids = append(invalids, fmt.Sprintf("%s invalid in %s", s.key, list(s.newlyInvalid)))
		}
		if len(s.importsAdded) == 0 && len(s.importsGone) == 0 {
			// A new export that serves nothing is said by its conflict.
			var serving []string
			for _, m := range s.exportsAdded {
				if !slices.Contains(s.stopped, m) {
					serving = append(serving, m)
				}
			}
			if len(serving) > 0 {
				exports = append(exports, fmt.Sprintf("export %s from %s", s.key, list(serving)))
			}
			if len(s.exportsGone) > 0 {
				exports = append(exports, fmt.Sprintf("unexport %s from %s", s.key, list(s.exportsGone)))
			}
			if len(s.endpoints) > 0 && len(s.exportsAdded) == 0 && len(s.exportsGone) == 0 && !s.endpointsExplained() {
				endpoints = append(endpoints, "endpoints of "+s.key)
			}
		}
	}
	var out []string
	for _, g := range [][]string{members, imports, removes, fields, policies, conflicts, invalids, exports} {
		out = append(out, g...)
	}
	out = append(out, d.gatewayEvents(len(out)+len(endpoints))...)
	return append(append(out, endpoints...), health...)
}

func serves(members []string) string {
	if len(members) == 1 {
		return "serves"
	}
	return "serve"
}

// endpointsExplained reports whether every endpoint count that changed is
// an exporter's that stopped or resumed serving: the event that says so
// says it all.
func (s *svcDiff) endpointsExplained() bool {
	for _, c := range s.change.Endpoints {
		if !slices.ContainsFunc([][]string{s.stopped, s.resumed, s.dropped, s.restored}, func(l []string) bool { return slices.Contains(l, c.Member) }) {
			return false
		}
	}
	return true
}

// importEvent says who the new imports come from. A service nobody
// validly exported before is an export, named by its actor: "cluster-2
// exports web/frontend to cluster-1, cluster-3" (its exporters import it
// too, which goes without saying). A service gaining importers otherwise
// (a member joining, a namespace created) is "import ns/name into ...".
func (s *svcDiff) importEvent() string {
	exporters := validExporters(s.next)
	if len(validExporters(s.prev)) > 0 || len(exporters) == 0 {
		return fmt.Sprintf("import %s into %s", s.key, list(s.importsAdded))
	}
	if !slices.ContainsFunc(exporters, func(m string) bool { return !slices.Contains(s.restored, m) }) {
		// Its exporters came back from stale: no one exported anything.
		return fmt.Sprintf("import %s into %s again", s.key, list(s.importsAdded))
	}
	own := toSet(exporters)
	var others []string
	for _, m := range s.importsAdded {
		if !own[m] {
			others = append(others, m)
		}
	}
	verb := "exports"
	if len(exporters) > 1 {
		verb = "export"
	}
	if len(others) == 0 {
		return fmt.Sprintf("%s %s %s; no other member imports it", list(exporters), verb, s.key)
	}
	return fmt.Sprintf("%s %s %s to %s", list(exporters), verb, s.key, list(others))
}

// body is the per-member and per-topic listing; empty when nothing in
// the reports changed and there is no health event.
func (d *reportDiff) body() string {
	var exports, conflicts, endpoints, policies []string
	for _, s := range d.services {
		for _, p := range s.policies {
			policies = append(policies, s.key+" in "+p)
		}
		for _, m := range s.exportsAdded {
			exports = append(exports, fmt.Sprintf("+ %s from %s", s.key, m))
		}
		for _, m := range s.exportsGone {
			exports = append(exports, fmt.Sprintf("- %s from %s", s.key, m))
		}
		for _, m := range s.pending {
			exports = append(exports, fmt.Sprintf("? %s from %s: waits for review", s.key, m))
		}
		for _, m := range s.dropped {
			exports = append(exports, fmt.Sprintf("- %s from %s: dropped, %s is stale", s.key, m, m))
		}
		for _, m := range s.restored {
			exports = append(exports, fmt.Sprintf("+ %s from %s: restored, %s is no longer stale", s.key, m, m))
		}
		for _, m := range slices.Sorted(maps.Keys(s.invalidNow)) {
			exports = append(exports, fmt.Sprintf("! %s from %s: invalid, %s", s.key, m, s.invalidNow[m]))
		}
		if s.conflictGone {
			conflicts = append(conflicts, s.key+": resolved")
		}
		if s.conflictNew || (s.next != nil && s.next.Conflicted() && (len(s.exportsAdded) > 0 || len(s.exportsGone) > 0)) {
			// Each losing export's line names the winner; the winner's
			// own would say every conflict again (see problemLines).
			losers := 0
			for _, e := range s.next.Exports {
				if c, ok := e.Condition("Conflict"); ok && c.Status == "True" && e.Member != s.next.Winner {
					losers++
				}
			}
			for _, e := range s.next.Exports {
				if c, ok := e.Condition("Conflict"); ok && c.Status == "True" && (e.Member != s.next.Winner || losers == 0) {
					line := fmt.Sprintf("%s from %s: %s: %s", s.key, e.Member, c.Reason, oneLine(c.Message))
					if r, ok := e.Condition("Ready"); ok && r.Status != "True" {
						line += "; " + oneLine(r.Message)
					}
					conflicts = append(conflicts, line)
				}
			}
		}
		if len(s.endpoints) > 0 {
			endpoints = append(endpoints, fmt.Sprintf("%s: %s", s.key, strings.Join(s.endpoints, ", ")))
		}
	}
	var b strings.Builder
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(title + ":\n")
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
		}
	}
	section("Changed imports", d.fieldLinesOnce())
	section("Namespaces to create (createMissingNamespaces)", d.namespaceLines())
	for _, mc := range d.memberChanges(nil) {
		section("Imports in "+mc.Member, d.importLines(mc))
	}
	section("Traffic policies", policies)
	section("Exports", exports)
	section("Conflicts", conflicts)
	section("Gateways", d.gatewayLines())
	section("Ready endpoints", endpoints)
	var ml []string
	for _, m := range d.members {
		ml = append(ml, oneLine(m.String()))
	}
	section("Members", ml)
	return b.String()
}

// MemberChange is what a change does to one member's imports: the
// services (namespace/name, sorted) whose import it adds or removes, and
// those still imported whose files under clusters/<member>/ it changes.
type MemberChange struct {
	Member  string   `json:"member"`
	Added   []string `json:"importsAdded"`
	Removed []string `json:"importsRemoved"`
	Changed []string `json:"importsChanged"`
}

// Empty reports whether the change leaves the member's imports alone.
func (m MemberChange) Empty() bool {
	return len(m.Added) == 0 && len(m.Removed) == 0 && len(m.Changed) == 0
}

// memberChanges lists every member in members, in that order, then any
// other member the change touches, sorted; without members, only the
// touched ones. Lists are never nil, so JSON shows [] for none.
func (d *reportDiff) memberChanges(members []string) []MemberChange {
	byName := map[string]*MemberChange{}
	var order []string
	get := func(m string) *MemberChange {
		if byName[m] == nil {
			byName[m] = &MemberChange{Member: m, Added: []string{}, Removed: []string{}, Changed: []string{}}
			order = append(order, m)
		}
		return byName[m]
	}
	for _, m := range members {
		get(m)
	}
	listed := len(order)
	for _, s := range d.services {
		for _, m := range s.importsAdded {
			get(m).Added = append(get(m).Added, s.key)
		}
		for _, m := range s.importsGone {
			get(m).Removed = append(get(m).Removed, s.key)
		}
		for _, m := range s.changedIn {
			get(m).Changed = append(get(m).Changed, s.key)
		}
	}
	sort.Strings(order[listed:])
	out := make([]MemberChange, len(order))
	for i, m := range order {
		out[i] = *byName[m]
	}
	return out
}

// importLines are a member's import changes as the message body lists
// them: "+ ns/name (Type from exporters)", "- ns/name", "~ ns/name".
func (d *reportDiff) importLines(mc MemberChange) []string {
	var out []string
	for _, k := range mc.Added {
		s := d.service(k)
		out = append(out, fmt.Sprintf("+ %s (%s from %s)", k, s.next.Type, strings.Join(validExporters(s.next), ", ")))
	}
	for _, k := range mc.Removed {
		out = append(out, "- "+k)
	}
	for _, k := range mc.Changed {
		out = append(out, "~ "+k)
	}
	return out
}

// namespaceLines are the namespaces the change makes the render create,
// once per namespace and member: "web in cluster-2".
func (d *reportDiff) namespaceLines() []string {
	var out []string
	for _, s := range d.services {
		ns, _, _ := strings.Cut(s.key, "/")
		for _, m := range s.change.NamespaceCreated {
			if l := ns + " in " + m; !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return out
}

// fieldLinesOnce are the changed imports' fields, once per service (every
// importer's ServiceImport carries the same): "ns/name: port http
// 8000/TCP -> 8001/TCP".
func (d *reportDiff) fieldLinesOnce() []string {
	var out []string
	for _, s := range d.services {
		if len(s.fields) > 0 {
			out = append(out, s.key+": "+strings.Join(s.fields, "; "))
		}
	}
	return out
}

// fieldChanges maps each service whose merged import changed to how
// (importChanges).
func (d *reportDiff) fieldChanges() map[string][]string {
	out := map[string][]string{}
	for _, s := range d.services {
		if len(s.fields) > 0 {
			out[s.key] = s.fields
		}
	}
	return out
}

// set is the change model of the services that changed.
func (d *reportDiff) set() change.Set {
	out := change.Set{Services: []change.Service{}, Gateways: d.gateways}
	for _, s := range d.services {
		if !s.change.Empty() {
			out.Services = append(out.Services, s.change)
		}
	}
	return out
}

// gatewayEvents say how a member's gateway itself changes (where the
// others reach it); its listeners follow from the exports, and are said
// only when nothing else is.
func (d *reportDiff) gatewayEvents(others int) []string {
	var out, listeners []string
	byMember := map[string][]string{}
	var members []string
	for _, g := range d.gateways {
		if strings.HasPrefix(g.Name, "listener ") || strings.HasPrefix(g.Name, "weighted ") {
			if !slices.Contains(listeners, g.Member) {
				listeners = append(listeners, g.Member)
			}
			continue
		}
		if _, ok := byMember[g.Member]; !ok {
			members = append(members, g.Member)
		}
		what := g.String()
		if g.Name == "addresses" && g.Old != "" && g.New != "" {
			what = "moves to " + g.New
		}
		byMember[g.Member] = append(byMember[g.Member], what)
	}
	for _, m := range members {
		out = append(out, fmt.Sprintf("%s's gateway %s", m, strings.Join(byMember[m], ", ")))
	}
	if len(out) == 0 && others == 0 && len(listeners) > 0 {
		out = append(out, "reallocate gateway listeners in "+list(listeners))
	}
	return out
}

// gatewayLines are the gateway changes, a line each, member first.
func (d *reportDiff) gatewayLines() []string {
	out := make([]string, 0, len(d.gateways))
	for _, g := range d.gateways {
		out = append(out, g.Member+": "+g.String())
	}
	return out
}

// service is the diff of the service called key (namespace/name).
func (d *reportDiff) service(key string) *svcDiff {
	i := sort.Search(len(d.services), func(i int) bool { return d.services[i].key >= key })
	return d.services[i]
}

// policyLines says, per consumer whose GlobalTrafficPolicy changes where
// its traffic goes, how, old -> new: the clusters its derived Service gets
// (a failover, say), the mode, the weights; or that the policy went.
// "cluster-2 (FailOver): cluster-2 -> cluster-1".
func policyLines(ps []change.Policy) []string {
	var out []string
	for _, p := range ps {
		was, is := p.Old, p.New
		if is == nil {
			out = append(out, fmt.Sprintf("%s (%s): policy removed, %s -> all exporters", p.Member, was.Mode, clusterList(was.Clusters)))
			continue
		}
		if was != nil && was.Mode != is.Mode {
			// A new mode is new behaviour: each side said whole, where
			// its traffic goes and in what order or share.
			out = append(out, fmt.Sprintf("%s: %s -> %s", p.Member, policyState(was), policyState(is)))
			continue
		}
		var how []string
		switch {
		case was == nil:
			how = append(how, "all exporters -> "+clusterList(is.Clusters))
		case !slices.Equal(was.Clusters, is.Clusters):
			how = append(how, clusterList(was.Clusters)+" -> "+clusterList(is.Clusters))
		}
		if was != nil && !maps.Equal(was.Weights, is.Weights) {
			how = append(how, "weights "+weightList(was.Weights)+" -> "+weightList(is.Weights))
		}
		out = append(out, fmt.Sprintf("%s (%s): %s", p.Member, is.Mode, strings.Join(how, "; ")))
	}
	return out
}

// policyState says where a policy sends traffic: "FailOver (cluster-1,
// then cluster-3)", "ActiveActive (cluster-1=80, cluster-3=20)".
func policyState(p *change.PolicyState) string {
	sep := ", "
	if p.Mode == "FailOver" {
		sep = ", then "
	}
	targets := strings.Join(p.Clusters, sep)
	if len(p.Clusters) == 0 {
		targets = "none"
	}
	if len(p.Weights) > 0 {
		targets = weightList(p.Weights)
	}
	return p.Mode + " (" + targets + ")"
}

// weightList is "a=80, b=20", by cluster ID; "none" when unweighted.
func weightList(w map[string]int32) string {
	if len(w) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, w[k]))
	}
	return strings.Join(parts, ", ")
}

func clusterList(c []string) string {
	if len(c) == 0 {
		return "none"
	}
	return strings.Join(c, ", ")
}

// touchedImports maps "<member>/<ns>/<svc>" for every changed file under
// clusters/<member>/<ns>/<svc>/.
func touchedImports(c *Changes) map[string]bool {
	out := map[string]bool{}
	if c == nil {
		return out
	}
	for _, p := range append(append([]string{}, c.Written...), c.Removed...) {
		if member, key, ok := importOf(p); ok {
			out[member+"/"+key] = true
		}
	}
	return out
}

func importers(s *render.ServiceReport) []string {
	if s == nil {
		return nil
	}
	return s.ImportedBy
}

func validExporters(s *render.ServiceReport) []string {
	var out []string
	for m, st := range change.ExportStates(s) {
		if st.Serving() {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, naturalCompare)
	return out
}

func conflicted(s *render.ServiceReport) bool { return s != nil && s.Conflicted() }

func toSet(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

// unionKeys are the keys of a and b, sorted, each once.
// ReportsChanged are the services (namespace/name) whose report file is
// among the paths.
func ReportsChanged(paths ...[]string) map[string]bool {
	out := map[string]bool{}
	for _, ps := range paths {
		for _, p := range ps {
			if ns, name, ok := serviceStatus(p); ok {
				out[ns+"/"+name] = true
			}
		}
	}
	return out
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
