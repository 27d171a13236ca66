// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
	"github.com/mcs-gitops/mcs-gitops/internal/contract"
	"github.com/mcs-gitops/mcs-gitops/internal/redact"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// Applier gets one member's rendered objects into that member cluster.
type Applier struct {
	// Client reaches the member cluster. Its RESTMapper must know the MCS
	// CRDs (a client from client.New discovers them).
	Client     client.Client
	Member     string
	ClusterSet string
	// Contract is what the member's directory may hold (its Gateway,
	// whether Namespaces are rendered); an object outside it is refused
	// before anything is sent. New sets it from the member's name only:
	// no Gateway, no Namespaces.
	Contract contract.Member
	// Log receives the per-member change set; nil means slog.Default().
	Log *slog.Logger
	// Now stamps condition transitions; nil means time.Now.
	Now func() time.Time
	// Memory, when set, carries what was applied from one Apply to the
	// next so unchanged objects cost no API calls; nil applies everything.
	// With a Memory, an object given to Apply must not be modified
	// afterwards: the same object given again is not prepared again.
	Memory *Memory
	// Builds, when set, carries the member's kustomize outputs from one
	// ApplyAll to the next so only changed files are built again; nil
	// builds everything.
	Builds *BuildCache
	// Change, when set, is what the commit being applied changed (the
	// change model), given only on the commit's first apply: Events tell
	// each export's owner who now reaches it, and each importer how its
	// import changed, once.
	Change *change.Set
	// AllowEmpty lets ApplyAll apply a commit without a directory for this
	// member, which prunes everything applied there before.
	AllowEmpty bool
	// StatusOnly writes what only mcs-gitops can (ServiceImport spec.ips
	// and status, ServiceExport conditions, GlobalTrafficPolicy status) and
	// applies, prunes and creates nothing: another applier (Flux, Argo CD)
	// applies the member's directory. An import that applier has not
	// created yet is skipped until the next cycle.
	StatusOnly bool
	// Events, when set, receives an Event per change of an export's,
	// import's or policy's state, in the member; Commit is the commit
	// being applied, named in each.
	Events Events
	Commit string
	// Budget bounds this member's apply and its status writes, each on
	// its own; zero: no deadline but the caller's.
	Budget Budget

	// Inputs is the member's committed snapshot (what its files under
	// inputs/ join to), when the caller has it; else ApplyAll joins it
	// from the files it is given (see writeReport).
	Inputs []byte
	// inputs is the snapshot of the apply under way; inputParts the
	// files of the tree being applied, where its parts are (reportKeys).
	inputs     []byte
	inputParts map[string][]byte
}

// New returns an Applier for one member of a ClusterSet.
func New(c client.Client, clusterSet string, m contract.Member, log *slog.Logger) *Applier {
	return &Applier{Client: c, ClusterSet: clusterSet, Member: m.Name, Contract: m, Log: log}
}

// Result is what one Apply did, objects named "Kind/namespace/name".
type Result struct {
	Member     string
	Created    []string
	Configured []string
	Unchanged  []string
	Deleted    []string
	// Skipped are objects left alone on purpose: a Namespace that already
	// exists, or an object the apply stage was told to skip.
	Skipped []string
	// Collisions are rendered objects whose name a user's object (one
	// without this applier's owner labels) already has; they are not
	// applied, and the user's object is untouched.
	Collisions []string
	// Refused are the rendered objects the member did not take, refused
	// by its apiserver or held by a user's object (a collision); the rest
	// were applied, pruned and had their status written regardless.
	Refused []Refusal
	// StatusWritten lists the status and spec.ips writes that changed
	// something, as "Kind/namespace/name status" or "... spec.ips".
	StatusWritten []string
	// Settled: the member was left alone, because nothing it holds (its
	// files, its exports' and policies' reports) changed since an apply
	// that took all of it, which the memory still vouches for; nothing
	// was built, compared or sent.
	Settled bool
	// Took is how long each step took, for the log and metrics.
	Took Steps
	Err  error
}

// Steps is the time one member's apply spent in each step. The build is
// ApplyAll's; Apply alone leaves it zero.
type Steps struct {
	Build, Collisions, Apply, Prune, Status time.Duration
}

// logValue is the steps in milliseconds, the same in text and JSON logs.
func (s Steps) logValue() slog.Value {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	return slog.GroupValue(slog.String("build", ms(s.Build)), slog.String("collisions", ms(s.Collisions)),
		slog.String("apply", ms(s.Apply)), slog.String("prune", ms(s.Prune)), slog.String("status", ms(s.Status)))
}

// timed adds the time since start to *d and returns now, so that steps
// can be chained: t = timed(&res.Took.Apply, t).
func timed(d *time.Duration, start time.Time) time.Time {
	now := time.Now()
	*d += now.Sub(start)
	return now
}

func (a *Applier) log() *slog.Logger {
	l := a.Log
	if l == nil {
		l = slog.Default()
	}
	return l.With("member", a.Member)
}

func (a *Applier) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Apply makes the member hold exactly the given rendered objects among
// those this applier owns: a collision check (a user's object with a
// rendered name is reported and skipped, never overwritten), Flux ssa
// ApplyAllStaged with field manager "mcs-gitops" and the owner labels,
// prune of owned objects no longer rendered (never a Namespace), then
// status write-back: ServiceImport status.clusters as rendered, spec.ips
// from the derived Service's cluster IPs, and from report the
// ServiceExport conditions of this member's exports and the status of its
// GlobalTrafficPolicies (nil report: neither).
//
// The caller's objects are not modified. The returned error is also in
// Result.Err; the Result lists what was done before it happened.
func (a *Applier) Apply(ctx context.Context, objects []*unstructured.Unstructured, report *render.Report) (*Result, error) {
	res, st := a.applyObjects(ctx, objects, report)
	if res.Err != nil {
		return res, res.Err
	}
	return a.finish(ctx, res, st, WithMemberProblems(report, []*Result{res}))
}

// applied is what applyObjects hands on to the report's status write.
type applied struct {
	desired []desiredObject
	keys    map[objKey]bool
}

// applyObjects is Apply up to, and not including, the ServiceExport and
// GlobalTrafficPolicy status: collision check, apply, prune, and the
// ServiceImports' own status and spec.ips. Result.Err is set on failure.
func (a *Applier) applyObjects(ctx context.Context, objects []*unstructured.Unstructured, report *render.Report) (*Result, *applied) {
	res := &Result{Member: a.Member}
	t := time.Now()
	fail := func(err error) (*Result, *applied) {
		res.Err = redact.Error(fmt.Errorf("member %q: %w", a.Member, err))
		a.logResult(res)
		return res, nil
	}
	if a.Client == nil {
		return fail(errors.New("no client"))
	}
	if a.Member == "" || a.ClusterSet == "" {
		return fail(errors.New("applier needs Member and ClusterSet"))
	}

	desired, err := a.prepare(objects)
	if err != nil {
		return fail(err)
	}
	if a.StatusOnly {
		ctx, cancel := a.Budget.context(ctx, len(desired))
		defer cancel()
		return a.statusOnly(ctx, desired, report, res, t)
	}
	// Outside the contract is refused before anything is sent, and stays
	// in desired so that prune keeps whatever was applied under that name.
	inside := desired
	if outside := a.checkContract(objects, desired, res); len(outside) > 0 {
		inside = slices.DeleteFunc(slices.Clone(desired), func(d desiredObject) bool { return outside[d.key] })
	}
	fresh, known := a.Memory.split(inside, a.now())
	for _, d := range desired {
		if known[d.key] {
			res.Unchanged = append(res.Unchanged, describe(d.obj))
		}
	}
	ctx, cancel := a.Budget.context(ctx, len(fresh))
	defer cancel()
	toApply, missing, err := a.checkCollisions(ctx, fresh, res)
	t = timed(&res.Took.Collisions, t)
	if err != nil {
		a.Memory.Forget()
		return fail(err)
	}
	// Namespaces first: the objects inside them need them.
	rest, refusedNS := a.createNamespaces(ctx, toApply, res)
	refused, err := a.applyStaged(ctx, rest, missing, res)
	t = timed(&res.Took.Apply, t)
	if err != nil {
		a.Memory.Forget()
		return fail(err)
	}
	toApply = slices.DeleteFunc(toApply, func(d desiredObject) bool { return refused[d.key] || refusedNS[d.key] })
	gatewayRefusals(desired, res)

	// Prune and status are independent: one failing does not stop the other.
	var errs []error
	if err := a.prune(ctx, desired, res); err != nil {
		errs = append(errs, err)
	}
	t = timed(&res.Took.Prune, t)
	keys := map[objKey]bool{}
	for _, d := range toApply {
		keys[d.key] = true
	}
	// Objects applied in an earlier cycle count as ours for the spec.ips
	// lookup; only the fresh ones get their status written again.
	owned := maps.Clone(keys)
	maps.Copy(owned, known)
	if err := a.writeImports(ctx, slices.Concat(toApply, importsOfTaken(inside, known, keys)), owned, missing, report, res); err != nil {
		errs = append(errs, err)
	}
	timed(&res.Took.Status, t)
	if err := errors.Join(errs...); err != nil {
		a.Memory.Forget()
		return fail(err)
	}
	return res, &applied{desired: desired, keys: keys}
}

// finish writes the report's ServiceExport and GlobalTrafficPolicy status
// for this member and remembers what was applied.
func (a *Applier) finish(ctx context.Context, res *Result, st *applied, report *render.Report) (*Result, error) {
	t := time.Now()
	ctx, cancel := a.Budget.context(ctx, len(st.keys))
	defer cancel()
	err := a.writeReport(ctx, report, res)
	timed(&res.Took.Status, t)
	if err != nil {
		a.Memory.Forget()
		res.Err = fmt.Errorf("member %q: %w", a.Member, err)
		a.logResult(res)
		return res, res.Err
	}
	a.Memory.remember(st.desired, st.keys)
	a.logResult(res)
	return res, nil
}

// desiredObject is one rendered object ready to apply: a copy carrying the
// owner labels, with the status it was rendered with taken out (a normal
// apply drops status; it goes through the status subresource), and the
// digest of both, which Memory compares.
type desiredObject struct {
	obj    *unstructured.Unstructured
	key    objKey
	status map[string]any
	sum    [32]byte
}

// prepare makes the desired objects. An object the Memory prepared in the
// last apply (the same pointer: a BuildCache hands unchanged objects out
// again) is not copied and hashed again.
func (a *Applier) prepare(objects []*unstructured.Unstructured) ([]desiredObject, error) {
	owner := a.ownerLabels()
	seen := map[objKey]bool{}
	out := make([]desiredObject, 0, len(objects))
	prepared := a.Memory.beginPrepare(len(objects))
	for i, o := range objects {
		if o == nil {
			return nil, fmt.Errorf("object %d is nil", i)
		}
		if err := contract.CheckKind(o.GetAPIVersion(), o.GetKind(), o.GetNamespace()); err != nil {
			return nil, fmt.Errorf("%s: %w", describe(o), err)
		}
		d, ok := prepared.get(o)
		if !ok {
			var err error
			if d, err = prepareOne(o, owner); err != nil {
				return nil, err
			}
		}
		prepared.put(o, d)
		k := d.key
		if seen[k] {
			return nil, fmt.Errorf("%s appears twice", describe(d.obj))
		}
		seen[k] = true
		out = append(out, d)
	}
	a.Memory.keepPrepared(prepared)
	return out, nil
}

func prepareOne(o *unstructured.Unstructured, owner map[string]string) (desiredObject, error) {
	// A JSON round trip rather than DeepCopy, which panics on the
	// non-JSON number types hand-built maps may contain.
	data, err := o.MarshalJSON()
	if err != nil {
		return desiredObject{}, fmt.Errorf("%s: encoding: %w", describe(o), err)
	}
	cp := &unstructured.Unstructured{}
	if err := cp.UnmarshalJSON(data); err != nil {
		return desiredObject{}, fmt.Errorf("%s: decoding: %w", describe(o), err)
	}
	d := desiredObject{obj: cp, key: keyOf(cp)}
	if st, ok := cp.Object["status"].(map[string]any); ok {
		d.status = st
	}
	delete(cp.Object, "status")
	// The member's Gateway is the user's: it takes our listeners, never
	// our labels (gateway.go).
	if keyOf(cp).GroupKind != contract.GatewayKind {
		setOwnerLabels(cp, owner)
	}
	d.sum = digest(d)
	return d, nil
}

// applyStaged applies toApply and returns the keys of the objects the
// member refused; an error means nothing could be decided. The objects
// whose outcome is known before asking (applyKnown: the member was just
// found not to hold them, in missing, or the memory knows it holds other
// bytes of ours) get one PATCH each; the rest, and any of those the
// member did not take that way, go through ssa.
func (a *Applier) applyStaged(ctx context.Context, toApply []desiredObject, missing map[objKey]*unstructured.Unstructured, res *Result) (map[objKey]bool, error) {
	toApply, gateways := splitGateways(toApply)
	refused := a.applyGateways(ctx, gateways, res)
	var known []desiredObject
	toApply = slices.DeleteFunc(slices.Clone(toApply), func(d desiredObject) bool {
		if _, ok := missing[d.key]; ok || a.Memory.changedSince(d) {
			known = append(known, d)
			return true
		}
		return false
	})
	if len(known) > 0 {
		failed, err := a.applyKnown(ctx, known, missing, res)
		if err != nil {
			return refused, err
		}
		toApply = append(toApply, failed...)
	}
	if len(toApply) == 0 {
		return refused, nil
	}
	// ApplyAll sorts the slice it is given in place: hand it its own.
	objs := make([]*unstructured.Unstructured, len(toApply))
	for i, d := range toApply {
		// ssa may change what it is given; the prepared object is kept
		// for the next apply.
		objs[i] = d.obj.DeepCopy()
	}
	objs = slices.Clip(objs)

	poller := polling.NewStatusPoller(a.Client, a.Client.RESTMapper(), polling.Options{})
	rm := ssa.NewResourceManager(a.Client, poller, ssa.Owner{Field: FieldManager, Group: "mcs-gitops.io"})
	rm.SetConcurrency(requestConcurrency)
	opts := ssa.DefaultApplyOptions()
	// Only objects this applier owns (or that do not exist) get here, so
	// an immutable-field change (a derived Service turning headless)
	// recreates the object rather than failing every cycle.
	opts.Force = true
	opts.WaitTimeout = 30 * time.Second
	opts.WaitInterval = 200 * time.Millisecond

	cs, err := rm.ApplyAllStaged(ctx, objs, opts)
	if err != nil {
		if ctx.Err() != nil {
			// The deadline stopped it, not the member: nothing is known
			// to be refused, and applying object by object would only
			// report every object as refused by its context.
			return refused, fmt.Errorf("applying %d object(s) did not finish in time: %w", len(objs), ctx.Err())
		}
		a.log().Warn("staged apply failed; applying object by object so only the refused ones are left out", "error", err)
		each, err := a.applyEach(ctx, rm, toApply, opts, res)
		maps.Copy(refused, each)
		return refused, err
	}
	if cs != nil {
		res.record(cs.Entries)
	}
	return refused, nil
}

// record files ssa's change set entries under the Result's lists.
func (res *Result) record(entries []ssa.ChangeSetEntry) {
	for _, e := range entries {
		id := e.ObjMetadata.GroupKind.Kind + "/" + e.ObjMetadata.Name
		if e.ObjMetadata.Namespace != "" {
			id = e.ObjMetadata.GroupKind.Kind + "/" + e.ObjMetadata.Namespace + "/" + e.ObjMetadata.Name
		}
		switch e.Action {
		case ssa.CreatedAction:
			res.Created = append(res.Created, id)
		case ssa.ConfiguredAction:
			res.Configured = append(res.Configured, id)
		case ssa.UnchangedAction:
			res.Unchanged = append(res.Unchanged, id)
		case ssa.SkippedAction:
			res.Skipped = append(res.Skipped, id)
		}
	}
}

func (a *Applier) logResult(res *Result) {
	l := a.log()
	for _, c := range res.Collisions {
		l.Warn("collision: a user's object has a rendered name; not applied", "object", c)
	}
	for _, r := range res.Refused {
		if !slices.Contains(res.Collisions, r.Object) {
			l.Warn("refused by the member; not applied", "object", r.Object, "error", r.Message)
		}
	}
	attrs := []any{
		"created", len(res.Created), "configured", len(res.Configured),
		"unchanged", len(res.Unchanged), "deleted", len(res.Deleted),
		"skipped", len(res.Skipped), "collisions", len(res.Collisions), "refused", len(res.Refused) - len(res.Collisions),
		"status", len(res.StatusWritten),
		"took", res.Took.logValue(),
	}
	if res.Err != nil {
		l.Error("apply failed", append(attrs, "error", res.Err)...)
		return
	}
	l.Info("applied", attrs...)
	for _, list := range []struct {
		action string
		ids    []string
	}{{"created", res.Created}, {"configured", res.Configured}, {"deleted", res.Deleted}, {"status", res.StatusWritten}} {
		for _, id := range list.ids {
			l.Debug(list.action, "object", id)
		}
	}
}
