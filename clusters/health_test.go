package clusters

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

func snapWithExport(member string) *snapshot.Snapshot {
	return &snapshot.Snapshot{Member: member, ServiceExports: []mcsv1alpha1.ServiceExport{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "httpbin", Name: "httpbin"},
	}}}
}

func mtime(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

func TestResolveSnapshots(t *testing.T) {
	now := time.Date(2026, 9, 1, 12, 0, 30, 500_000_000, time.FixedZone("CEST", 2*3600))
	nowSec := now.UTC().Truncate(time.Second)
	earlier := nowSec.Add(-90 * time.Minute)
	down := errors.New("member \"b\": connection refused")
	fresh := snapWithExport("a")
	lastB := snapWithExport("b")

	type want struct {
		members  []string // members of the returned snapshots, in order
		exports  []int    // export counts per returned snapshot
		health   []Health // Message compared by substring
		messages []string
	}
	tests := []struct {
		name       string
		results    []Result
		lastKnown  map[string]*snapshot.Snapshot
		prev       map[string]Health
		staleAfter time.Duration
		want       want
	}{{
		name:    "all reachable",
		results: []Result{{Member: "a", Snapshot: fresh}, {Member: "b", Snapshot: snapWithExport("b")}},
		want: want{members: []string{"a", "b"}, exports: []int{1, 1},
			health: []Health{{Member: "a", Reachable: true}, {Member: "b", Reachable: true}}, messages: []string{"", ""}},
	}, {
		name:      "first failure keeps last known, since now truncated to the second in UTC",
		results:   []Result{{Member: "a", Snapshot: fresh}, {Member: "b", Err: down, Reason: ReasonUnreachable}},
		lastKnown: map[string]*snapshot.Snapshot{"b": lastB},
		want: want{members: []string{"a", "b"}, exports: []int{1, 1},
			health: []Health{{Member: "a", Reachable: true},
				{Member: "b", Reason: ReasonUnreachable, UnreachableSince: mtime(nowSec)}},
			messages: []string{"", "keeping its last known exports"}},
	}, {
		name:      "still down keeps the first failure time",
		results:   []Result{{Member: "b", Err: down, Reason: ReasonTimeout}},
		lastKnown: map[string]*snapshot.Snapshot{"b": lastB},
		prev:      map[string]Health{"b": {Member: "b", Reason: ReasonUnreachable, UnreachableSince: mtime(earlier)}},
		want: want{members: []string{"b"}, exports: []int{1},
			health:   []Health{{Member: "b", Reason: ReasonTimeout, UnreachableSince: mtime(earlier)}},
			messages: []string{"unreachable since " + earlier.Format(time.RFC3339)}},
	}, {
		name:       "before staleAfter: kept, message says until when",
		results:    []Result{{Member: "b", Err: down, Reason: ReasonUnreachable}},
		lastKnown:  map[string]*snapshot.Snapshot{"b": lastB},
		prev:       map[string]Health{"b": {Member: "b", UnreachableSince: mtime(earlier)}},
		staleAfter: 2 * time.Hour,
		want: want{members: []string{"b"}, exports: []int{1},
			health:   []Health{{Member: "b", Reason: ReasonUnreachable, UnreachableSince: mtime(earlier)}},
			messages: []string{"until " + earlier.Add(2*time.Hour).Format(time.RFC3339)}},
	}, {
		name:       "after staleAfter: exports dropped, namespaces kept",
		results:    []Result{{Member: "b", Err: down, Reason: ReasonUnreachable}},
		lastKnown:  map[string]*snapshot.Snapshot{"b": lastB},
		prev:       map[string]Health{"b": {Member: "b", UnreachableSince: mtime(earlier)}},
		staleAfter: time.Hour,
		want: want{members: []string{"b"}, exports: []int{0},
			health:   []Health{{Member: "b", Reason: ReasonUnreachable, UnreachableSince: mtime(earlier), ExportsDropped: true}},
			messages: []string{"longer than staleAfter 1h0m0s"}},
	}, {
		name:    "failed without last known contributes nothing",
		results: []Result{{Member: "a", Snapshot: fresh}, {Member: "b", Err: down, Reason: ReasonConfig}},
		want: want{members: []string{"a"}, exports: []int{1},
			health: []Health{{Member: "a", Reachable: true},
				{Member: "b", Reason: ReasonConfig, UnreachableSince: mtime(nowSec)}},
			messages: []string{"", "no snapshot of it was ever committed"}},
	}, {
		name:      "recovery clears since",
		results:   []Result{{Member: "b", Snapshot: snapWithExport("b")}},
		lastKnown: map[string]*snapshot.Snapshot{"b": lastB},
		prev:      map[string]Health{"b": {Member: "b", UnreachableSince: mtime(earlier), ExportsDropped: true}},
		want: want{members: []string{"b"}, exports: []int{1},
			health: []Health{{Member: "b", Reachable: true}}, messages: []string{""}},
	}, {
		name:      "a member that was reachable before restarts the clock",
		results:   []Result{{Member: "b", Err: down}},
		lastKnown: map[string]*snapshot.Snapshot{"b": lastB},
		prev:      map[string]Health{"b": {Member: "b", Reachable: true}},
		want: want{members: []string{"b"}, exports: []int{1},
			health:   []Health{{Member: "b", Reason: ReasonUnreachable, UnreachableSince: mtime(nowSec)}},
			messages: []string{"keeping"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snaps, health := ResolveSnapshots(tt.results, tt.lastKnown, tt.prev, now, tt.staleAfter)
			var members []string
			var exports []int
			for _, s := range snaps {
				members = append(members, s.Member)
				exports = append(exports, len(s.ServiceExports))
			}
			if !reflect.DeepEqual(members, tt.want.members) || !reflect.DeepEqual(exports, tt.want.exports) {
				t.Errorf("snapshots: members %v exports %v, want %v %v", members, exports, tt.want.members, tt.want.exports)
			}
			if len(health) != len(tt.want.health) {
				t.Fatalf("health: got %d entries, want %d", len(health), len(tt.want.health))
			}
			for i, h := range health {
				msg := h.Message
				h.Message = ""
				if !reflect.DeepEqual(h, tt.want.health[i]) {
					t.Errorf("health[%d] = %+v, want %+v", i, h, tt.want.health[i])
				}
				if w := tt.want.messages[i]; (w == "") != (msg == "") || !strings.Contains(msg, w) {
					t.Errorf("health[%d].Message = %q, want it to contain %q", i, msg, w)
				}
			}
			if len(lastB.ServiceExports) != 1 {
				t.Fatal("lastKnown snapshot was modified")
			}
			// Pure: the same arguments give the same answer.
			_, again := ResolveSnapshots(tt.results, tt.lastKnown, tt.prev, now, tt.staleAfter)
			if !reflect.DeepEqual(health, again) {
				t.Errorf("second call differs: %+v vs %+v", health, again)
			}
		})
	}
}

func TestHealthFileRoundTrip(t *testing.T) {
	since := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
	in := []Health{
		{Member: "cluster-1", Reachable: true},
		{Member: "cluster-2", Reason: ReasonTimeout, UnreachableSince: mtime(since), ExportsDropped: true, Message: "m"},
	}
	data, err := HealthFile(in)
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
		t.Errorf("HealthFile:\n%s\nwant:\n%s", data, want)
	}
	again, _ := HealthFile(in)
	if string(again) != string(data) {
		t.Error("HealthFile is not deterministic")
	}
	got, err := ParseHealthFile(data)
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
	if m, err := ParseHealthFile(nil); err != nil || len(m) != 0 {
		t.Errorf("empty file: %v, %v", m, err)
	}
	for _, bad := range []string{"members: [{member: a}, {member: a}]", "members: [{reachable: true}]", "members: {"} {
		if _, err := ParseHealthFile([]byte(bad)); err == nil {
			t.Errorf("ParseHealthFile(%q) succeeded", bad)
		}
	}
}
