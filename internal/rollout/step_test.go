// SPDX-License-Identifier: Apache-2.0

package rollout

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
	"github.com/mcs-gitops/mcs-gitops/render"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func threeWaves() *Rollout {
	return Start("shop/cart", []v1alpha1.RolloutKind{v1alpha1.RolloutImport}, []Wave{
		{Name: "canary", Members: []string{"eu-1"}, Soak: 5 * time.Minute},
		{Name: "empty"},
		{Name: "eu", Members: []string{"eu-2"}},
		{Name: RestWave, Members: []string{"us-1"}},
	}, nil, nil, "target", t0)
}

// A wave moves on only once every gate held for its soak; an empty wave
// is passed over; the last wave done ends the rollout.
func TestAdvanceSoaksEachWave(t *testing.T) {
	r := threeWaves()
	p := &Progress{}
	assert.Equal(t, []string{"eu-2", "us-1"}, r.Behind())

	r.Observe(p, []Check{{Member: "eu-1", Gate: "ServiceImport", Message: "has no IPs yet"}}, v1alpha1.RolloutBlock, t0.Add(time.Minute))
	assert.Equal(t, "member eu-1: ServiceImport: has no IPs yet", p.Waiting)
	ev, done := r.Advance(p, t0.Add(10*time.Minute))
	assert.Empty(t, ev, "a gate that does not hold yet holds the wave")
	assert.False(t, done)

	r.Observe(p, []Check{{Member: "eu-1"}}, v1alpha1.RolloutBlock, t0.Add(2*time.Minute))
	assert.Equal(t, t0.Add(7*time.Minute), r.Due(p))
	ev, _ = r.Advance(p, t0.Add(6*time.Minute))
	assert.Empty(t, ev, "the soak is not over")
	ev, _ = r.Advance(p, t0.Add(7*time.Minute))
	assert.Equal(t, "wave 3 of 4 (eu): eu-2", ev, "the empty wave is passed over")
	assert.Equal(t, []string{"us-1"}, r.Behind())

	r.Observe(p, []Check{{Member: "eu-2"}}, v1alpha1.RolloutBlock, t0.Add(8*time.Minute))
	ev, _ = r.Advance(p, t0.Add(8*time.Minute))
	assert.Equal(t, "wave 4 of 4 (rest): us-1", ev, "no soak: as soon as the gates hold")
	r.Observe(p, []Check{{Member: "us-1"}}, v1alpha1.RolloutBlock, t0.Add(9*time.Minute))
	ev, done = r.Advance(p, t0.Add(9*time.Minute))
	assert.Equal(t, "done", ev)
	assert.True(t, done)
}

// A failed gate pauses the rollout until a person resumes it; an
// unreachable member blocks the wave, or with Skip is let go and named.
func TestPauseResumeAndUnreachable(t *testing.T) {
	r := threeWaves()
	p := &Progress{}
	r.Observe(p, []Check{{Member: "eu-1", Gate: "applied", Message: "refused", Failed: true}}, v1alpha1.RolloutBlock, t0)
	ev, _ := r.Advance(p, t0.Add(time.Hour))
	assert.Equal(t, "paused at wave 1: member eu-1: applied: refused", ev)
	require.NotNil(t, r.Paused)
	assert.Contains(t, r.Note(), "mcs-gitops rollout resume|abort shop/cart")
	r.Observe(p, []Check{{Member: "eu-1"}}, v1alpha1.RolloutBlock, t0.Add(time.Hour))
	ev, _ = r.Advance(p, t0.Add(2*time.Hour))
	assert.Empty(t, ev, "paused stays paused when the gate holds again")

	r.Request = Resume
	assert.Equal(t, "resumed", r.Act(t0.Add(2*time.Hour)))
	assert.Nil(t, r.Paused)
	assert.Empty(t, r.Request)

	p = &Progress{}
	r.Observe(p, []Check{{Member: "eu-1", Unreachable: true}}, v1alpha1.RolloutBlock, t0.Add(3*time.Hour))
	assert.Contains(t, p.Waiting, "eu-1 cannot be read (unreachable: Block)")
	assert.True(t, r.Due(p).IsZero())
	r.Observe(p, []Check{{Member: "eu-1", Unreachable: true}}, v1alpha1.RolloutSkip, t0.Add(3*time.Hour))
	ev, _ = r.Advance(p, t0.Add(4*time.Hour))
	assert.Equal(t, "wave 3 of 4 (eu): eu-2", ev)
	assert.Equal(t, []string{"eu-1"}, r.Skipped)
}

// The supersede rule: a change taken back ends the rollout; a newer one
// moves the target, and the wave in progress soaks again; an aborted
// rollout starts over.
func TestSupersede(t *testing.T) {
	r := threeWaves()
	assert.False(t, r.Supersede("target", "base", t0))
	assert.True(t, r.Supersede("base", "base", t0), "back as it was: done")

	r.Reached = 3
	assert.False(t, r.Supersede("newer", "base", t0.Add(time.Hour)))
	assert.Equal(t, "newer", r.Target)
	assert.Equal(t, t0.Add(time.Hour), r.WaveAt)
	assert.Equal(t, 3, r.Reached, "the members reached take the newer change; the wave in progress soaks again")

	r.Request = Abort
	assert.Equal(t, "aborted", r.Act(t0))
	assert.Equal(t, []string{"eu-1", "eu-2", "us-1"}, r.Behind(), "aborted: everyone as before")
	r.Supersede("newest", "base", t0.Add(2*time.Hour))
	assert.False(t, r.Aborted)
	assert.Equal(t, 1, r.Reached, "a change after an abort starts from the first wave")
}

func cartExport(member string, port int32) (mcsv1alpha1.ServiceExport, corev1.Service) {
	se := mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart"}}
	svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: port, Protocol: corev1.ProtocolTCP}}}}
	return se, svc
}

// The world before: each rolling service's exports as they were, an
// exporter that withdrew since left withdrawn, the imports the world
// before lacked held, and the state round-trips through its file.
func TestStaging(t *testing.T) {
	se, old := cartExport("us-1", 80)
	_, now := cartExport("us-1", 8080)
	us := &snapshot.Snapshot{Member: "us-1", ServiceExports: []mcsv1alpha1.ServiceExport{se}, Services: []corev1.Service{now}}
	gone := &snapshot.Snapshot{Member: "ap-1"}
	r := threeWaves()
	r.Importers = []string{"eu-1"}
	r.Before = []Export{{Member: "us-1", ServiceExport: &se, Service: &old}, {Member: "ap-1", ServiceExport: &se, Service: &old}}
	st := &State{Rollouts: []*Rollout{r}}
	b, err := Format(st)
	require.NoError(t, err)
	back, err := Parse(b)
	require.NoError(t, err)
	again, err := Format(back)
	require.NoError(t, err)
	assert.Equal(t, string(b), string(again), "byte for byte")
	assert.Equal(t, Digest(r.Before), Digest(back.Rollouts[0].Before))

	staged := Staging(back, []*snapshot.Snapshot{us, gone})
	require.Len(t, staged.Before, 2)
	assert.Equal(t, int32(80), staged.Before[0].Services[0].Spec.Ports[0].Port, "the rolling export as it was")
	assert.Equal(t, int32(8080), us.Services[0].Spec.Ports[0].Port, "the live snapshot is not touched")
	assert.Empty(t, staged.Before[1].ServiceExports, "a withdrawal is never staged")
	assert.True(t, staged.Behind[render.ImportKey{Member: "eu-2", Namespace: "shop", Name: "cart"}])
	assert.True(t, staged.BeforeHeld[render.ImportKey{Member: "eu-2", Namespace: "shop", Name: "cart"}], "eu-2 did not import before")
	assert.False(t, staged.Behind[render.ImportKey{Member: "eu-1", Namespace: "shop", Name: "cart"}])
	assert.Contains(t, staged.Notes["shop/cart"], "rolling out: wave 1 of 4 (canary)")
	assert.Nil(t, Staging(&State{}, nil))
}

func TestParseRefuses(t *testing.T) {
	for name, data := range map[string]string{
		"an unknown request":   "rollouts:\n- service: shop/cart\n  reached: 1\n  waves: [{name: a}]\n  request: Later\n",
		"a wave past the plan": "rollouts:\n- service: shop/cart\n  reached: 2\n  waves: [{name: a}]\n",
		"no service":           "rollouts:\n- reached: 1\n  waves: [{name: a}]\n",
		"an unknown field":     "rollouts:\n- service: shop/cart\n  reached: 1\n  waves: [{name: a}]\n  speed: fast\n",
	} {
		_, err := Parse([]byte(data))
		assert.Error(t, err, name)
	}
	st, err := Parse(nil)
	require.NoError(t, err)
	assert.Empty(t, st.Rollouts)
}
