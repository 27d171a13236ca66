// SPDX-License-Identifier: Apache-2.0

package lineage_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/internal/lineage"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// The record on a real apiserver: missing is no record; what the loop
// saves reads back; a person's acceptance is kept by the loop's next
// save and says who, why, when and what it replaced; an Event lands on
// the ConfigMap; a ConfigMap edited into nonsense is an error naming it.
func TestConfigMapRecord(t *testing.T) {
	ctx := context.Background()
	c := envtest.Start(t, 1)[0].Client
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mcs-gitops"}}))
	store := &lineage.ConfigMap{Client: c, Namespace: "mcs-gitops", Name: "mcs-gitops-lineage"}

	rec, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Nil(t, rec, "no ConfigMap, no record")

	first := "1111111111111111111111111111111111111111"
	saved := &lineage.Record{Repository: "https://git.example/fleet.git", Branch: "main", Path: "mcs", Commit: first, Members: []string{"cluster-1", "cluster-2"}}
	require.NoError(t, store.Save(ctx, saved))
	rec, err = store.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, saved, rec)
	assert.True(t, rec.Same("https://git.example/fleet.git", "main", "mcs"))
	assert.False(t, rec.Same("https://git.example/fleet.git", "main", ""))

	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	accepted, err := store.Accept(ctx, saved.Repository, "main", "mcs", "", "jane@example.com", "restored from backup", at)
	require.NoError(t, err)
	rec, err = store.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, accepted, rec)
	assert.Empty(t, rec.Commit, "accepted as it is: no commit to descend from")
	assert.Empty(t, rec.Members)
	assert.Equal(t, &lineage.Acceptance{By: "jane@example.com", Reason: "restored from backup", At: at, Previous: first}, rec.Accepted)

	second := "2222222222222222222222222222222222222222"
	require.NoError(t, store.Save(ctx, &lineage.Record{Repository: saved.Repository, Branch: "main", Path: "mcs", Commit: second}))
	rec, err = store.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, second, rec.Commit)
	require.NotNil(t, rec.Accepted, "the loop's save keeps the acceptance")
	assert.Equal(t, "jane@example.com", rec.Accepted.By)

	_, err = store.Accept(ctx, saved.Repository, "main", "mcs", "abc", "jane", "typo", at)
	assert.ErrorContains(t, err, `"abc" is not a full commit hash`)

	require.NoError(t, store.Event(ctx, "BranchRefused", "Refuse", "the remote branch main was rewritten", at))
	var evs eventsv1.EventList
	require.NoError(t, c.List(ctx, &evs, client.InNamespace("mcs-gitops")))
	require.Len(t, evs.Items, 1)
	assert.Equal(t, "ConfigMap", evs.Items[0].Regarding.Kind)
	assert.Equal(t, "mcs-gitops-lineage", evs.Items[0].Regarding.Name)
	assert.Equal(t, "BranchRefused", evs.Items[0].Reason)
	assert.Equal(t, corev1.EventTypeWarning, evs.Items[0].Type)

	var cm corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: "mcs-gitops-lineage"}, &cm))
	cm.Data["commit"] = "HEAD~1"
	require.NoError(t, c.Update(ctx, &cm))
	_, err = store.Load(ctx)
	assert.ErrorContains(t, err, `ConfigMap mcs-gitops/mcs-gitops-lineage: commit "HEAD~1" is not a commit hash`)
}
