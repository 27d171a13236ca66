// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
)

// ServedResources are the resources a member serves in groupVersion, by
// name, each with its verbs, as its discovery says; empty when it serves
// nothing of the group version (404). Any other error is returned: a
// member that could not be asked is not one that lacks the API. The read
// takes ctx (discovery's plain calls take none), so a member that never
// answers costs ctx's deadline, not for ever.
func ServedResources(ctx context.Context, cs kubernetes.Interface, groupVersion string) (map[string][]string, error) {
	list, err := discovery.ToDiscoveryInterfaceWithContext(cs.Discovery()).ServerResourcesForGroupVersionWithContext(ctx, groupVersion)
	if apierrors.IsNotFound(err) {
		return map[string][]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(list.APIResources))
	for _, r := range list.APIResources {
		out[r.Name] = r.Verbs
	}
	return out, nil
}
