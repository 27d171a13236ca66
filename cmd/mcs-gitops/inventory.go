// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/gitsync"
	"github.com/mcs-gitops/mcs-gitops/internal/inventory"
	"github.com/mcs-gitops/mcs-gitops/internal/layout"
	"github.com/mcs-gitops/mcs-gitops/internal/reconcile"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// inventoryState is what connect read of the cluster inventory: the
// provider file and the profiles listed, or why they could not be.
type inventoryState struct {
	providers *inventory.ProviderFile
	profiles  []*inventory.Profile
	listErr   error
	// record is the membership joinInventory put in force, file its
	// status/inventory.yaml, held whether it is the committed one held.
	record *layout.InventoryRecord
	file   []byte
	held   bool
}

// lastAccess keeps, for the life of the process, the config last built
// for each ClusterProfile (namespace/name). A member whose profile is
// gone while the inventory is held (it lists nothing, or cannot be
// listed) is read with it when run reloads for another reason (the
// config or a Secret changed): the members keep being read instead of
// turning into outages.
var lastAccess = struct {
	sync.Mutex
	byRef map[string]*rest.Config
}{byRef: map[string]*rest.Config{}}

// readInventory loads the provider file and lists the profiles. A
// provider file that does not load is bad input; a list that fails is
// kept as listErr, for joinInventory to weigh against what is committed.
func (f *loopFlags) readInventory(ctx context.Context, e *env) (*inventoryState, error) {
	src := e.cfg.Spec.Inventory
	p := src.ProviderFile
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(f.config), p)
	}
	providers, err := inventory.LoadProviders(p)
	if err != nil {
		return nil, fmt.Errorf("%s: spec.inventory.providerFile: %w", f.config, err)
	}
	st := &inventoryState{providers: providers}
	st.profiles, st.listErr = inventory.List(ctx, e.mgmt, src)
	return st, nil
}

// access builds the config of a member whose credentials come through
// the ClusterProfile ref: a listed profile, else one read by name (a
// hand-written member's), else, while the inventory is held, the config
// last built for it.
func (st *inventoryState) access(e *env) func(context.Context, v1alpha1.ClusterProfileRef) (*rest.Config, error) {
	return func(ctx context.Context, ref v1alpha1.ClusterProfileRef) (*rest.Config, error) {
		key := ref.Namespace + "/" + ref.Name
		var p *inventory.Profile
		for _, l := range st.profiles {
			if l.Ref() == key {
				p = l
			}
		}
		if p == nil {
			var err error
			if p, err = inventory.Get(ctx, e.mgmt, ref); err != nil {
				lastAccess.Lock()
				cfg, ok := lastAccess.byRef[key]
				lastAccess.Unlock()
				if ok {
					return rest.CopyConfig(cfg), nil
				}
				return nil, err
			}
		}
		if bad, msg := p.Unhealthy(); bad {
			return nil, &clusters.NotHealthyError{Profile: key, Message: msg}
		}
		cfg, err := st.providers.Config(p)
		if err != nil {
			return nil, err
		}
		lastAccess.Lock()
		lastAccess.byRef[key] = rest.CopyConfig(cfg)
		lastAccess.Unlock()
		return cfg, nil
	}
}

// joinInventory puts the inventory's members in force: the membership
// the listed profiles give, recorded for status/inventory.yaml, added to
// e's config and connected. committed is the membership the rendered
// repository's HEAD records (nil: none, or not known). An inventory that
// could not be listed, or lists no profile at all while committed has
// members, is held: the committed members stay, as members that could not
// be read would (their last snapshots stand in, staleAfter applies), and
// nothing is withdrawn because a namespace was emptied or a list failed.
func (e *env) joinInventory(ctx context.Context, committed *layout.InventoryRecord) error {
	st := e.inventory
	if st == nil || st.record != nil {
		return nil // no inventory, or its members are in e already
	}
	src := e.cfg.Spec.Inventory
	rec, held, err := inventory.Resolve(src, st.profiles, st.listErr, configured(e.cfg, nil), committed)
	if err != nil {
		return &exitError{3, err}
	}
	switch {
	case held && st.listErr != nil:
		e.log.Error("inventory not listed; keeping the members committed", "members", len(rec.Members), "err", st.listErr)
	case held:
		e.log.Warn("inventory lists no ClusterProfiles; holding the members committed", "namespace", src.Namespace, "members", len(rec.Members))
	}
	for _, r := range rec.Refused {
		e.log.Warn("ClusterProfile is not a member", "profile", r.Profile, "reason", r.Reason)
	}
	st.record, st.held = rec, held
	if st.file, err = layout.FormatInventory(st.record); err != nil {
		return err
	}
	cfg, err := layout.WithInventory(e.cfg, st.record, "the inventory's members")
	if err != nil {
		return &exitError{2, err}
	}
	extra := *cfg
	extra.Spec.Members = cfg.Spec.Members[len(e.cfg.Spec.Members):]
	added := clusters.Connect(ctx, &extra, clusters.ConnectOptions{Management: e.mgmt, Log: e.log, ClusterProfile: st.access(e)})
	all, err := clusters.Concat(e.members, added)
	if err != nil {
		return &exitError{2, err}
	}
	for _, m := range added.Members() {
		if m.Err != nil {
			e.log.Warn("inventory member has no client", "member", m.Name, "err", m.Err)
		}
	}
	e.cfg, e.members = cfg, all
	return nil
}

// committedInventory is the membership HEAD of repo records; nil when
// there is none.
func committedInventory(repo *gitsync.Repo) (*layout.InventoryRecord, error) {
	head, err := repo.Head()
	if err != nil {
		return nil, &exitError{3, err}
	}
	files, err := repo.Files(head, layout.InventoryFile)
	if err != nil {
		return nil, &exitError{3, fmt.Errorf("read %s: %w", layout.InventoryFile, err)}
	}
	r, err := layout.ParseInventory(files[layout.InventoryFile])
	if err != nil {
		return nil, &exitError{2, errors.New("HEAD's " + err.Error())}
	}
	return r, nil
}

// joinCommittedInventory is joinInventory against what repo's HEAD
// records.
func (e *env) joinCommittedInventory(ctx context.Context, repo *gitsync.Repo) error {
	if e.inventory == nil {
		return nil
	}
	rec, err := committedInventory(repo)
	if err != nil {
		return err
	}
	return e.joinInventory(ctx, rec)
}

// inventoryPoll is how often run lists the ClusterProfiles to see
// whether the membership, a member's health or its access changed, on
// top of listing them at once when a watch says one changed: the poll
// covers a watch that broke.
var inventoryPoll = 5 * time.Second

// inventorySettle is how long the watch must be quiet before a change
// the list showed is confirmed by a second list, and inventorySettleMax
// the most a stream of changes may delay it.
var inventorySettle, inventorySettleMax = time.Second, 10 * time.Second

// settle waits until events has been quiet for inventorySettle, or
// inventorySettleMax has passed; false when ctx ended first.
func settle(ctx context.Context, events <-chan struct{}) bool {
	limit := time.NewTimer(inventorySettleMax)
	defer limit.Stop()
	for {
		quiet := time.NewTimer(inventorySettle)
		select {
		case <-ctx.Done():
			quiet.Stop()
			return false
		case <-limit.C:
			quiet.Stop()
			return true
		case <-quiet.C:
			return true
		case <-events:
			quiet.Stop()
		}
	}
}

// profileEvents signals (coalesced) each time a watch of the inventory's
// ClusterProfiles sees one added, changed or deleted; the watch is
// started again after it ends, until ctx does. Without a management
// config nothing is watched: the poll alone goes on.
func (e *env) profileEvents(ctx context.Context) <-chan struct{} {
	out := make(chan struct{}, 1)
	if e.mgmtConfig == nil {
		return out
	}
	wc, err := client.NewWithWatch(e.mgmtConfig, client.Options{})
	if err != nil {
		e.log.Warn("cannot watch ClusterProfiles; the inventory is polled only", "every", inventoryPoll, "err", err)
		return out
	}
	src := e.cfg.Spec.Inventory
	opts := []client.ListOption{client.InNamespace(src.Namespace)}
	if len(src.MatchLabels) > 0 {
		opts = append(opts, client.MatchingLabels(src.MatchLabels))
	}
	go func() {
		for ctx.Err() == nil {
			var list unstructured.UnstructuredList
			list.SetGroupVersionKind(inventory.GroupVersionKind.GroupVersion().WithKind(inventory.Kind + "List"))
			w, err := wc.Watch(ctx, &list, opts...)
			if err != nil {
				// The poll reports a list that fails; retry at its pace.
				select {
				case <-ctx.Done():
				case <-time.After(inventoryPoll):
				}
				continue
			}
			for range w.ResultChan() {
				select {
				case out <- struct{}{}:
				default:
				}
			}
			w.Stop()
		}
	}()
	return out
}

// fingerprint is what of profiles, as members, decides what joinInventory
// does: the membership, each member's health verdict and its access
// providers. A cluster manager's heartbeat (a property's
// lastObservedTime) is not in it, so it reloads nothing.
func fingerprint(src *v1alpha1.InventorySource, profiles []*inventory.Profile, configured map[string]string) string {
	h := sha256.New()
	b, _ := layout.FormatInventory(inventory.Membership(src, profiles, configured))
	h.Write(b)
	ps := slices.Clone(profiles)
	slices.SortFunc(ps, func(a, b *inventory.Profile) int { return strings.Compare(a.Ref(), b.Ref()) })
	for _, p := range ps {
		// The verdict only: a condition message that counts the minutes
		// of an outage would reload every poll.
		bad, _ := p.Unhealthy()
		acc, _ := json.Marshal(p.Providers())
		fmt.Fprintf(h, "\x00%s\x00%t\x00%s", p.Ref(), bad, acc)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// configured maps each hand-written member to its cluster ID (its name
// when it has none), for inventory.Membership.
func configured(cfg *v1alpha1.ClusterSet, inventoryMembers *layout.InventoryRecord) map[string]string {
	from := map[string]bool{}
	if inventoryMembers != nil {
		for _, m := range inventoryMembers.Members {
			from[m.Name] = true
		}
	}
	out := map[string]string{}
	for _, m := range cfg.Spec.Members {
		if from[m.Name] {
			continue
		}
		id := m.ClusterID
		if id == "" {
			id = m.Name
		}
		out[m.Name] = id
	}
	return out
}

// watchInventory calls reload once when the profiles listed would give
// another membership, health or access than those in force, and returns
// when ctx ends. A list that fails, or that is empty while members are in
// force, reloads nothing: the members in force stay (joinInventory's
// guard), and it is logged once.
func (e *env) watchInventory(ctx context.Context, reload func(why string), m *reconcile.Metrics) {
	st := e.inventory
	src := e.cfg.Spec.Inventory
	conf := configured(e.cfg, st.record)
	seen := fingerprint(src, st.profiles, conf)
	t := time.NewTicker(inventoryPoll)
	defer t.Stop()
	changed := e.profileEvents(ctx)
	warned := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-changed:
		}
		profiles, err := inventory.List(ctx, e.mgmt, src)
		moved := err == nil && fingerprint(src, profiles, conf) != seen
		if moved && len(profiles) > 0 {
			// Profiles go one by one when a namespace or a cluster
			// manager is emptied: a list taken between two deletes would
			// be acted on as departures, not as the emptied inventory the
			// guard holds. A change is acted on once the watch has been
			// quiet and a second list says the same.
			if !settle(ctx, changed) {
				return
			}
			profiles, err = inventory.List(ctx, e.mgmt, src)
			moved = err == nil && fingerprint(src, profiles, conf) != seen
		}
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			m.InventoryHeld.Set(1)
			if warned != err.Error() {
				e.log.Error("inventory not listed; the members in force stay", "err", err)
				warned = err.Error()
			}
			continue
		case len(profiles) == 0 && len(st.record.Members) > 0:
			m.InventoryHeld.Set(1)
			if warned != "empty" {
				e.log.Warn("inventory lists no ClusterProfiles; holding the members in force", "namespace", src.Namespace, "members", len(st.record.Members))
				warned = "empty"
			}
			continue
		}
		warned = ""
		m.InventoryHeld.Set(0)
		if moved {
			reload("the cluster inventory changed (ClusterProfiles in namespace " + src.Namespace + ")")
			return
		}
	}
}
