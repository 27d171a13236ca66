// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// Renderer renders a ClusterSet and lays it out as Files does, call after
// call, keeping for each service what it rendered to: its files' bytes and
// its report, not its objects. A service whose render.Inputs are the Same
// as at the last call (in the Same render.Context) is neither rendered nor
// serialized again, so a change costs the services it touches and the
// files that list every service (each member's kustomization.yaml when a
// path came or went, status/SUMMARY.md), not the whole ClusterSet.
//
// What Render returns is what Files of render.RenderWith returns, byte for
// byte; the bytes are shared with later calls and must not be modified.
// The snapshots given must not be modified afterwards either: the inputs
// kept point into them. Not safe for concurrent use.
type Renderer struct {
	ctx      render.Context
	services map[string]*renderedService
	// kustomizations are, per member, the last resources listed and the
	// file's bytes.
	kustomizations map[string]*renderedKustomization
	// files is how many files the last call returned.
	files int
	// memberFiles are, per member, the member-level files of the last
	// call; touched the members its changes reached (Touched).
	memberFiles map[string][]renderedFile
	touched     map[string]bool
	// out is the last call's files, changed in place by the next call;
	// changed the paths that call set or removed (Changed).
	out     map[string][]byte
	changed []string
}

// renderedService is what one service rendered to.
type renderedService struct {
	in  render.Inputs
	out *render.ServiceOutput // without objects
	// files are, per member, the service's files there: full paths, sorted.
	files  [][]renderedFile
	status []byte
}

type renderedFile struct {
	path string // from the repository's root
	rel  string // from the member's directory, as kustomization.yaml lists it
	data []byte
}

type renderedKustomization struct {
	resources []string
	data      []byte
}

// Render renders cfg and snaps with opts and lays the output out.
func (r *Renderer) Render(cfg *v1alpha1.ClusterSet, snaps []*snapshot.Snapshot, opts render.Options) (map[string][]byte, *render.Report, error) {
	p, err := render.Prepare(cfg, snaps, opts)
	if err != nil {
		return nil, nil, err
	}
	ctx := p.Context()
	prev := r.services
	if !r.ctx.Same(ctx) {
		prev = nil
	}
	members := p.Members()
	var work serializing
	// changed says, per member, that a path of a service came or went.
	changed := make([]bool, len(members))
	services := make(map[string]*renderedService, p.Len())
	order := make([]*renderedService, p.Len())
	outs := make([]*render.ServiceOutput, p.Len())
	for i := range order {
		ns, name := p.Key(i)
		id := ns + "/" + name
		in := p.Inputs(i)
		old := prev[id]
		s := old
		if old == nil || !old.in.Same(in) {
			s = r.renderService(p, i, in, members, &work)
			if len(work.jobs) >= flushJobs {
				// A first render would otherwise hold every object of the
				// ClusterSet until it serializes them: 400,000 at 100
				// members x 1,000 services.
				if err := work.run(); err != nil {
					return nil, nil, err
				}
				work = serializing{}
			}
			for m := range members {
				changed[m] = changed[m] || !samePaths(old, s, m)
			}
		}
		services[id], order[i], outs[i] = s, s, s.out
	}
	for id, old := range prev {
		if services[id] == nil {
			for m := range members {
				changed[m] = changed[m] || !samePaths(old, nil, m)
			}
		}
	}
	touched := r.touch(prev, services, members)

	memberObjs := p.MemberObjects(outs)
	memberFiles := make([][]renderedFile, len(members))
	for m, objs := range memberObjs {
		memberFiles[m] = make([]renderedFile, len(objs))
		for j, o := range objs {
			job := objectJob(members[m], o)
			memberFiles[m][j] = renderedFile{path: job.path, rel: o.Path}
			work.add(job, &memberFiles[m][j].data)
		}
	}
	report := p.Report(outs)
	var gateways []byte
	if len(report.Gateways) > 0 {
		work.add(gatewaysJob(report.Gateways), &gateways)
	}
	kustomizations := make(map[string]*renderedKustomization, len(members))
	for m, name := range members {
		k := r.kustomization(name, prev != nil && !changed[m], order, m, memberFiles[m])
		if k.data == nil {
			work.add(kustomizationJob(name, k.resources), &k.data)
		}
		kustomizations[name] = k
	}
	if err := work.run(); err != nil {
		return nil, nil, err
	}

	// The files are the last call's with this call's changes made to
	// them, and handed out as a copy: cloning a map costs a fraction of
	// filling one path by path (at 100 members x 1,000 services, half a
	// million paths).
	files := r.out
	var changedPaths []string
	set := func(p string, b []byte) {
		files[p] = b
		changedPaths = append(changedPaths, p)
	}
	drop := func(p string) {
		delete(files, p)
		changedPaths = append(changedPaths, p)
	}
	full := prev == nil || files == nil
	if full {
		files = make(map[string][]byte, r.files+1)
		for i, s := range order {
			for _, mf := range s.files {
				for _, f := range mf {
					files[f.path] = f.data
				}
			}
			ns, name := p.Key(i)
			files[ServiceStatusFile(ns, name)] = s.status
		}
	} else {
		for id, old := range prev {
			if services[id] == old {
				continue
			}
			for _, mf := range old.files {
				for _, f := range mf {
					drop(f.path)
				}
			}
			ns, name := splitID(id)
			drop(ServiceStatusFile(ns, name))
		}
		for i, s := range order {
			ns, name := p.Key(i)
			if prev[ns+"/"+name] == s {
				continue
			}
			for _, mf := range s.files {
				for _, f := range mf {
					set(f.path, f.data)
				}
			}
			set(ServiceStatusFile(ns, name), s.status)
		}
		for _, mf := range r.memberFiles {
			for _, f := range mf {
				drop(f.path)
			}
		}
		drop(GatewaysFile)
	}
	for _, mf := range memberFiles {
		for _, f := range mf {
			set(f.path, f.data)
		}
	}
	for name, k := range kustomizations {
		set(MemberDir(name)+"kustomization.yaml", k.data)
	}
	if gateways != nil {
		set(GatewaysFile, gateways)
	}
	set(SummaryFile, []byte(Summary(&report, members)))
	lastMemberFiles := make(map[string][]renderedFile, len(members))
	for m, name := range members {
		if old, ok := r.memberFiles[name]; !ok || !sameFiles(old, memberFiles[m]) {
			touched[name] = true
		}
		lastMemberFiles[name] = memberFiles[m]
	}
	r.ctx, r.services, r.kustomizations, r.files, r.out = ctx, services, kustomizations, len(files), files
	r.memberFiles, r.touched = lastMemberFiles, touched
	r.changed = nil
	if !full {
		r.changed = compactPaths(changedPaths)
	}
	files = maps.Clone(files)
	return files, &report, nil
}

// Changed are the paths at which the last Render's files may differ from
// the ones the call before it returned (set again or removed); nil when
// the last call rendered everything anew, when any path may differ.
func (r *Renderer) Changed() []string { return r.changed }

func compactPaths(ps []string) []string {
	slices.Sort(ps)
	return slices.Compact(ps)
}

func splitID(id string) (ns, name string) {
	ns, name, _ = strings.Cut(id, "/")
	return ns, name
}

// Touched are the members whose files, or whose exports' and policies'
// reports, the last Render may have changed since the one before it:
// every member after the first call or a change of render.Context;
// else the members with a file of a service rendered again, added or
// gone (before or after), an export or policy in its report, or a
// member-level file that changed. A member not among them holds the
// same bytes and the same part of the report as before.
func (r *Renderer) Touched() map[string]bool { return r.touched }

// touch lists the members the services rendered anew (or gone) reach.
func (r *Renderer) touch(prev, next map[string]*renderedService, members []string) map[string]bool {
	touched := map[string]bool{}
	if prev == nil {
		for _, m := range members {
			touched[m] = true
		}
		return touched
	}
	reach := func(s *renderedService) {
		for m, files := range s.files {
			if len(files) > 0 {
				touched[members[m]] = true
			}
		}
		for _, e := range s.out.Report.Exports {
			touched[e.Member] = true
		}
		for _, p := range s.out.Report.Policies {
			touched[p.Member] = true
		}
	}
	for id, s := range next {
		if old := prev[id]; old != s {
			reach(s)
			if old != nil {
				reach(old)
			}
		}
	}
	for id, old := range prev {
		if next[id] == nil {
			reach(old)
		}
	}
	return touched
}

func sameFiles(a, b []renderedFile) bool {
	return slices.EqualFunc(a, b, func(x, y renderedFile) bool { return x.rel == y.rel && string(x.data) == string(y.data) })
}

// renderService renders the i-th service of p and queues its files.
func (r *Renderer) renderService(p *render.Prepared, i int, in render.Inputs, members []string, work *serializing) *renderedService {
	out := p.Service(i)
	s := &renderedService{in: in, out: out.WithoutObjects(), files: make([][]renderedFile, len(members))}
	for m, objs := range out.Objects {
		if len(objs) == 0 {
			continue
		}
		objs = slices.Clone(objs)
		sort.Slice(objs, func(a, b int) bool { return objs[a].Path < objs[b].Path })
		s.files[m] = make([]renderedFile, len(objs))
		for j, o := range objs {
			job := objectJob(members[m], o)
			s.files[m][j] = renderedFile{path: job.path, rel: o.Path}
			work.add(job, &s.files[m][j].data)
		}
	}
	work.add(statusJob(&s.out.Report), &s.status)
	return s
}

// kustomization is member m's kustomization.yaml: the last one when no
// path of a service came or went (unchanged) and the member-level files
// are the same, else a new list, serialized only when it differs.
func (r *Renderer) kustomization(name string, unchanged bool, services []*renderedService, m int, memberFiles []renderedFile) *renderedKustomization {
	old, had := r.kustomizations[name]
	if had && unchanged && sameRels(r.memberFiles[name], memberFiles) {
		return old
	}
	resources := []string{} // an empty list is written as [], not null
	if had {
		resources = make([]string, 0, len(old.resources))
	}
	for _, f := range memberFiles {
		resources = append(resources, f.rel)
	}
	for _, s := range services {
		for _, f := range s.files[m] {
			resources = append(resources, f.rel)
		}
	}
	sort.Strings(resources)
	k := &renderedKustomization{resources: resources}
	if had && slices.Equal(old.resources, resources) {
		k.data = old.data
	}
	return k
}

// samePaths reports whether services a and b (either nil: none) have the
// same files in member m.
func samePaths(a, b *renderedService, m int) bool {
	var pa, pb []renderedFile
	if a != nil && m < len(a.files) {
		pa = a.files[m]
	}
	if b != nil && m < len(b.files) {
		pb = b.files[m]
	}
	return sameRels(pa, pb)
}

// sameRels reports whether a and b are files at the same paths.
func sameRels(a, b []renderedFile) bool {
	return slices.EqualFunc(a, b, func(x, y renderedFile) bool { return x.rel == y.rel })
}

// flushJobs is how many files Render serializes at once, at most: enough
// to keep the workers busy, few enough that the objects waiting are a
// small part of the ClusterSet.
var flushJobs = 20000

// serializing collects files to serialize and where each one's bytes go.
type serializing struct {
	jobs []fileJob
	dst  []*[]byte
}

func (s *serializing) add(j fileJob, dst *[]byte) {
	s.jobs = append(s.jobs, j)
	s.dst = append(s.dst, dst)
}

func (s *serializing) run() error {
	results, err := serialize(s.jobs)
	if err != nil {
		return err
	}
	for i, b := range results {
		*s.dst[i] = b
	}
	return nil
}
