// SPDX-License-Identifier: Apache-2.0

package fleetstatus

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters"
)

// readTimeout bounds one member's live read.
var readTimeout = 10 * time.Second

// liveMember is what one member holds now.
type liveMember struct {
	err     error
	version string
	// imports maps namespace/name to spec.ips.
	imports map[string][]string
}

// readMembers reads every member (or only one) in parallel.
func readMembers(ctx context.Context, set *clusters.Set, only string) map[string]liveMember {
	out := map[string]liveMember{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range set.Members() {
		if only != "" && m.Name != only {
			continue
		}
		wg.Go(func() {
			l := readMember(ctx, m)
			mu.Lock()
			out[m.Name] = l
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func readMember(ctx context.Context, m *clusters.Member) liveMember {
	if m.Err != nil {
		return liveMember{err: m.Err}
	}
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	cs, err := kubernetes.NewForConfig(m.Config)
	if err != nil {
		return liveMember{err: err}
	}
	// Without the context, a member that takes connections and never
	// answers would hold status for ever.
	v, err := discovery.ToDiscoveryInterfaceWithContext(cs.Discovery()).ServerVersionWithContext(ctx)
	if err != nil {
		return liveMember{err: fmt.Errorf("member %q: %w", m.Name, err)}
	}
	var list mcsv1alpha1.ServiceImportList
	if err := m.Client.List(ctx, &list); err != nil {
		return liveMember{err: fmt.Errorf("member %q: list ServiceImports: %w", m.Name, err), version: v.GitVersion}
	}
	l := liveMember{version: v.GitVersion, imports: map[string][]string{}}
	for _, si := range list.Items {
		l.imports[si.Namespace+"/"+si.Name] = si.Spec.IPs
	}
	return l
}
