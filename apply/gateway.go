// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/contract"
)

// The member's own Gateway is the one object the applier writes without
// owning it: with tcpListeners: Gateway the commit declares of it only the
// TCP listeners of the member's exports (the contract refuses anything
// else), and server-side apply merges them into the user's Gateway, whose
// spec.listeners is a map-list keyed by name. So, unlike everything else
// it applies, the Gateway
//
//   - gets no owner labels (prepareOne): they would make the user's object
//     look like one prune may delete, and fight the user's tooling over
//     metadata.labels;
//   - is never created (checkCollisions): a Gateway is the user's, with a
//     class and listeners of their own, and one made of our listeners
//     alone is not one;
//   - is applied without forcing (applyGateways): Flux ssa forces field
//     ownership, which takes a listener of the user's named like ours, and
//     with Force it deletes and recreates an object its dry run fails on;
//     through it, a Gateway whose user's listeners left no room for ours
//     was deleted (found by testGatewayListeners). A conflict or an
//     invalid result is reported as a refusal instead;
//   - is never pruned (contract.Prunable leaves the kind out): once no commit
//     declares listeners for it, they are released (releaseGateway).
//
// contract.GatewayKind names the kind.

// gatewayAbsent is why a rendered Gateway is not applied when the member
// has none of that name.
const gatewayAbsent = "the member's Gateway does not exist: mcs-gitops adds its listeners to the Gateway you create, and never creates one"

// splitGateways takes the Gateways out of objs.
func splitGateways(objs []desiredObject) (rest, gateways []desiredObject) {
	for _, d := range objs {
		if d.key.GroupKind == contract.GatewayKind {
			gateways = append(gateways, d)
		} else {
			rest = append(rest, d)
		}
	}
	return rest, gateways
}

// applyGateways merges the rendered listeners into the member's Gateway by
// server-side apply under FieldManager, without forcing: a listener some
// other manager holds with other values is a conflict the member refuses,
// and so is a listener list over the Gateway's limit of 64 (the user's
// listeners count). It returns the keys of the refused ones.
func (a *Applier) applyGateways(ctx context.Context, gateways []desiredObject, res *Result) map[objKey]bool {
	refused := map[objKey]bool{}
	for _, d := range gateways {
		id := describe(d.obj)
		before := &metav1.PartialObjectMetadata{}
		before.SetGroupVersionKind(d.obj.GroupVersionKind())
		err := a.Client.Get(ctx, client.ObjectKeyFromObject(d.obj), before)
		if err == nil {
			err = a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(d.obj.DeepCopy()), client.FieldOwner(FieldManager))
		}
		after := &metav1.PartialObjectMetadata{}
		after.SetGroupVersionKind(d.obj.GroupVersionKind())
		if err == nil {
			err = a.Client.Get(ctx, client.ObjectKeyFromObject(d.obj), after)
		}
		switch {
		case apierrors.IsNotFound(err):
			refused[d.key] = true
			res.Refused = append(res.Refused, Refusal{Object: id, Message: gatewayAbsent})
		case err != nil:
			refused[d.key] = true
			res.Refused = append(res.Refused, Refusal{Object: id, Message: err.Error()})
		case after.ResourceVersion == before.ResourceVersion:
			res.Unchanged = append(res.Unchanged, id)
		default:
			res.Configured = append(res.Configured, id)
		}
	}
	return refused
}

// gatewayRefusals makes a refusal of the member's Gateway a problem of
// every service whose TCPRoute attaches to it: without the listeners,
// those routes carry nothing, and the exports' Ready condition must say
// so. The Gateway itself belongs to no single service.
func gatewayRefusals(desired []desiredObject, res *Result) {
	var out []Refusal
	for _, r := range res.Refused {
		var services []string
		for _, d := range desired {
			if r.Service == "" && d.key.GroupKind == contract.GatewayKind && describe(d.obj) == r.Object {
				services = routedThrough(desired, d.obj)
			}
		}
		if len(services) == 0 {
			out = append(out, r)
		}
		for _, svc := range services {
			out = append(out, Refusal{Object: r.Object, Service: svc, Message: r.Message})
		}
	}
	res.Refused = out
}

// routedThrough lists the services of the TCPRoutes in desired whose
// parent is gateway gw.
func routedThrough(desired []desiredObject, gw *unstructured.Unstructured) []string {
	var out []string
	for _, d := range desired {
		if d.key.GroupKind != (schema.GroupKind{Group: contract.GatewayKind.Group, Kind: "TCPRoute"}) {
			continue
		}
		parents, _, _ := unstructured.NestedSlice(d.obj.Object, "spec", "parentRefs")
		for _, p := range parents {
			p, _ := p.(map[string]any)
			if p["kind"] == contract.GatewayKind.Kind && p["name"] == gw.GetName() && p["namespace"] == gw.GetNamespace() {
				if svc := serviceOf(d.obj); svc != "" && !slices.Contains(out, svc) {
					out = append(out, svc)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// heldGateway is the member's Gateway when field manager mcs-gitops holds
// fields of it, nil otherwise (no gateway configured, no Gateway API, no
// such Gateway, or nothing of ours in it).
func (a *Applier) heldGateway(ctx context.Context) (*metav1.PartialObjectMetadata, error) {
	ns, name := a.Contract.GatewayNamespace, a.Contract.GatewayName
	if name == "" {
		return nil, nil
	}
	mapping, err := a.Client.RESTMapper().RESTMapping(contract.GatewayKind)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", contract.GatewayKind, err)
	}
	g := &metav1.PartialObjectMetadata{}
	g.SetGroupVersionKind(mapping.GroupVersionKind)
	err = a.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, g)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	// Listeners are applied only after the same read succeeds, so a member
	// role without it (one granted before tcpListeners existed) never let
	// mcs-gitops write any; a member that takes its listeners in the
	// Gateway needs the right, and is told so.
	if apierrors.IsForbidden(err) && !a.Contract.GatewayListeners {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Gateway %s/%s: %w", ns, name, err)
	}
	if !managedBy(g, FieldManager) {
		return nil, nil
	}
	return g, nil
}

// releaseGateway takes the listeners mcs-gitops applied to the member's
// Gateway back out of it once no commit declares them: it applies the
// Gateway with nothing but its name under the same field manager, and
// server-side apply removes every field that manager held and no longer
// applies, while the user's listeners, class and labels, held by their own
// managers, stay, and so does the Gateway. It belongs with prune, which
// deletes what mcs-gitops applied and no longer renders, and for the same
// reason runs after the apply: listeners that moved to ListenerSets go
// only once those are in place.
func (a *Applier) releaseGateway(ctx context.Context, keep map[objKey]bool, res *Result) error {
	g, err := a.heldGateway(ctx)
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	if g == nil {
		return nil
	}
	if keep[objKey{GroupKind: contract.GatewayKind, Namespace: g.Namespace, Name: g.Name}] {
		return nil
	}
	id := contract.GatewayKind.Kind + "/" + g.Namespace + "/" + g.Name
	u := skeleton(g.GroupVersionKind(), g.Namespace, g.Name)
	if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("prune: removing mcs-gitops's listeners from %s: %w", id, err)
	}
	res.Configured = append(res.Configured, id)
	return nil
}
