// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

func withExports(member string, names ...string) *Snapshot {
	s := &Snapshot{Member: member}
	for _, n := range names {
		s.ServiceExports = append(s.ServiceExports, mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: n, CreationTimestamp: metav1.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}})
	}
	return s
}

// heldIn lists the members whose Health says they are held.
func heldIn(res *Resolution) []string {
	var out []string
	for _, h := range res.Health {
		if h.Held != nil {
			out = append(out, h.Member)
		}
	}
	return out
}

func keys(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "shop/" + n
	}
	return out
}

// Where the guard draws the line: at least MinExports withdrawn and more
// than MaxSharePercent of what the last commit rendered; a release names
// the withdrawal by digest; a terminating export counts as withdrawn; a
// member already stood in for is left alone.
func TestHoldWithdrawals(t *testing.T) {
	committed, err := Format(withExports("a", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9"))
	require.NoError(t, err)
	all := keys("s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9")
	guard := Guard{MinExports: 5, MaxSharePercent: 50}
	run := func(g Guard, live *Snapshot, reachable bool) (*Resolution, []string) {
		t.Helper()
		res := &Resolution{Snapshots: []*Snapshot{live}, Files: map[string][]byte{"a": []byte("live")},
			Health: []Health{{Member: "a", Reachable: reachable}}}
		require.NoError(t, HoldWithdrawals(res, LastCommit{Inputs: map[string][]byte{"a": committed}}, map[string][]string{"a": all}, g))
		return res, heldIn(res)
	}

	for _, tc := range []struct {
		name string
		left []string
		held bool
	}{
		{"four of ten gone: under minExports", []string{"s0", "s1", "s2", "s3", "s4", "s5"}, false},
		{"five of ten gone: exactly half is not more than half", []string{"s0", "s1", "s2", "s3", "s4"}, false},
		{"six of ten gone", []string{"s0", "s1", "s2", "s3"}, true},
		{"every export gone", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, held := run(guard, withExports("a", tc.left...), true)
			if !tc.held {
				assert.Empty(t, held)
				assert.Equal(t, "live", string(res.Files["a"]))
				assert.Nil(t, res.Health[0].Held)
				return
			}
			assert.Equal(t, []string{"a"}, held)
			assert.Equal(t, committed, res.Files["a"], "the committed snapshot stands in")
			assert.Len(t, res.Snapshots[0].ServiceExports, 10)
			h := res.Health[0]
			require.NotNil(t, h.Held)
			assert.Equal(t, 10-len(tc.left), h.Held.Withdrawn)
			assert.Equal(t, 10, h.Held.Exported)
			assert.Len(t, h.Held.Digest, 12)
			assert.LessOrEqual(t, len(h.Held.Examples), 5)
			assert.Contains(t, h.Message, "digest: "+h.Held.Digest)
			assert.True(t, h.Reachable, "a held member is still read")
		})
	}

	_, held := run(Guard{MinExports: -1, MaxSharePercent: 50}, withExports("a"), true)
	assert.Empty(t, held, "minExports -1 turns the guard off")

	res, held := run(guard, withExports("a"), true)
	require.Len(t, held, 1)
	digest := res.Health[0].Held.Digest
	_, held = run(Guard{MinExports: 5, MaxSharePercent: 50, Released: map[string]string{"a": digest}}, withExports("a"), true)
	assert.Empty(t, held, "released by its digest")
	_, held = run(Guard{MinExports: 5, MaxSharePercent: 50, Released: map[string]string{"a": digest}}, withExports("a", "s0"), true)
	assert.Len(t, held, 1, "a release is for one withdrawal: another one is held")

	terminating := withExports("a", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9")
	for i := range 6 {
		now := metav1.Now()
		terminating.ServiceExports[i].DeletionTimestamp = &now
	}
	_, held = run(guard, terminating, true)
	assert.Len(t, held, 1, "terminating exports are withdrawn")

	_, held = run(guard, withExports("a"), false)
	assert.Empty(t, held, "a member already stood in for is not the guard's")
}

// Members each under the line, withdrawing most of the ClusterSet
// together (one bad release deployed to every member), are all held when
// the ClusterSet rule is on; a member that withdraws nothing is not.
func TestHoldWithdrawalsAcrossTheClusterSet(t *testing.T) {
	names := []string{"s0", "s1", "s2", "s3"}
	last := LastCommit{Inputs: map[string][]byte{}}
	exported := map[string][]string{}
	for _, m := range []string{"a", "b", "c"} {
		b, err := Format(withExports(m, names...))
		require.NoError(t, err)
		last.Inputs[m] = b
		exported[m] = keys(names...)
	}
	run := func(g Guard) ([]string, *Resolution) {
		res := &Resolution{
			Snapshots: []*Snapshot{withExports("a", "s0"), withExports("b", "s0"), withExports("c", names...)},
			Files:     map[string][]byte{"a": []byte("live"), "b": []byte("live"), "c": []byte("live")},
			Health:    []Health{{Member: "a", Reachable: true}, {Member: "b", Reachable: true}, {Member: "c", Reachable: true}},
		}
		require.NoError(t, HoldWithdrawals(res, last, exported, g))
		return heldIn(res), res
	}
	// a and b withdraw 3 of 4 each: under minExports 5 alone; together 6
	// of the ClusterSet's 12 is exactly half, not more.
	held, _ := run(Guard{MinExports: 5, MaxSharePercent: 50, MaxClusterSetSharePercent: 50})
	assert.Empty(t, held)
	held, res := run(Guard{MinExports: 5, MaxSharePercent: 50, MaxClusterSetSharePercent: 40})
	assert.Equal(t, []string{"a", "b"}, held)
	require.NotNil(t, res.Health[0].Held)
	assert.True(t, res.Health[0].Held.ClusterSet)
	assert.Contains(t, res.Health[0].Message, "the members together 6 of the ClusterSet's 12")
	assert.Nil(t, res.Health[2].Held, "a member that withdraws nothing is not held")
	held, _ = run(Guard{MinExports: 5, MaxSharePercent: 50})
	assert.Empty(t, held, "without the ClusterSet rule each member is judged alone")
}

// A member looks wiped, and is held under minExports: every one of its
// exports gone at once (two or more), or the namespace of what it
// withdraws recreated under a new UID (a cluster rebuilt with CRDs and
// namespaces before its workloads). A UID the commit did not record, or
// the same UID, is no recreation; a release lets it through.
func TestHoldWithdrawalsLooksWiped(t *testing.T) {
	guard := Guard{MinExports: 5, MaxSharePercent: 50}
	withNS := func(uid string, names ...string) *Snapshot {
		s := withExports("a", names...)
		s.Namespaces = []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: types.UID(uid)}}}
		return s
	}
	run := func(t *testing.T, g Guard, was, live *Snapshot) *Health {
		t.Helper()
		committed, err := Format(was)
		require.NoError(t, err)
		var before []string
		for _, e := range was.ServiceExports {
			before = append(before, e.Namespace+"/"+e.Name)
		}
		res := &Resolution{Snapshots: []*Snapshot{live}, Files: map[string][]byte{"a": []byte("live")},
			Health: []Health{{Member: "a", Reachable: true}}}
		require.NoError(t, HoldWithdrawals(res, LastCommit{Inputs: map[string][]byte{"a": committed}}, map[string][]string{"a": before}, g))
		return &res.Health[0]
	}
	for _, tc := range []struct {
		name      string
		was, live *Snapshot
		wiped     string
	}{
		{"both of two exports gone", withNS("u1", "s0", "s1"), withNS("u1"), "every one of its 2 exports went at once"},
		{"the only export gone", withNS("u1", "s0"), withNS("u1"), ""},
		{"one of three gone, its namespace recreated", withNS("u1", "s0", "s1", "s2"), withNS("u2", "s0", "s1"), "namespace(s) shop were recreated (new UIDs)"},
		{"one of three gone, the same namespace", withNS("u1", "s0", "s1", "s2"), withNS("u1", "s0", "s1"), ""},
		{"one of three gone, no UID recorded", withNS("", "s0", "s1", "s2"), withNS("u2", "s0", "s1"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := run(t, guard, tc.was, tc.live)
			if tc.wiped == "" {
				assert.Nil(t, h.Held)
				return
			}
			require.NotNil(t, h.Held)
			assert.Equal(t, tc.wiped, h.Held.Wiped)
			assert.Contains(t, h.Message, "it looks wiped: "+tc.wiped)
			released := guard
			released.Released = map[string]string{"a": h.Held.Digest}
			assert.Nil(t, run(t, released, tc.was, tc.live).Held, "released")
		})
	}
}
