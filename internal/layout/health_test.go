// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

func TestHealthFileRoundTrip(t *testing.T) {
	since := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
	in := []snapshot.Health{
		{Member: "cluster-1", Reachable: true},
		{Member: "cluster-2", Reason: clusters.ReasonTimeout, UnreachableSince: &metav1.Time{Time: since}, ExportsDropped: true, Message: "m"},
	}
	data, err := FormatHealth(in)
	if err != nil {
		t.Fatal(err)
	}
	want := healthHeader + `members:
- member: cluster-1
  reachable: true
- exportsDropped: true
  member: cluster-2
  message: m
  reachable: false
  reason: Timeout
  unreachableSince: "2026-09-01T10:00:00Z"
`
	if string(data) != want {
		t.Errorf("FormatHealth:\n%s\nwant:\n%s", data, want)
	}
	again, _ := FormatHealth(in)
	if string(again) != string(data) {
		t.Error("FormatHealth is not deterministic")
	}
	got, err := ParseHealth(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range in {
		g := got[h.Member]
		if g.Member != h.Member || g.Reachable != h.Reachable || g.Reason != h.Reason || g.ExportsDropped != h.ExportsDropped ||
			(h.UnreachableSince == nil) != (g.UnreachableSince == nil) ||
			(h.UnreachableSince != nil && !g.UnreachableSince.Equal(h.UnreachableSince)) {
			t.Errorf("round trip %s: got %+v, want %+v", h.Member, g, h)
		}
	}
	if m, err := ParseHealth(nil); err != nil || len(m) != 0 {
		t.Errorf("empty file: %v, %v", m, err)
	}
	for _, bad := range []string{"members: [{member: a}, {member: a}]", "members: [{reachable: true}]", "members: {"} {
		if _, err := ParseHealth([]byte(bad)); err == nil {
			t.Errorf("ParseHealth(%q) succeeded", bad)
		}
	}
}
