// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
)

func snapWithExport(member string) *Snapshot {
	return &Snapshot{Member: member, ServiceExports: []mcsv1alpha1.ServiceExport{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "httpbin", Name: "httpbin", CreationTimestamp: metav1.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	}}}
}

// What clusters classifies a failed read as; Resolve only copies it.
const (
	reasonUnreachable = "Unreachable"
	reasonTimeout     = "Timeout"
	reasonConfig      = "Config"
)

func mtime(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

func TestResolve(t *testing.T) {
	now := time.Date(2026, 9, 1, 12, 0, 30, 500_000_000, time.FixedZone("CEST", 2*3600))
	nowSec := now.UTC().Truncate(time.Second)
	earlier := nowSec.Add(-90 * time.Minute)
	fresh := snapWithExport("a")
	lastB, err := Format(snapWithExport("b"))
	if err != nil {
		t.Fatal(err)
	}

	type want struct {
		members  []string // members of the returned snapshots, in order
		exports  []int    // export counts per returned snapshot
		health   []Health // Message compared by substring
		messages []string
	}
	tests := []struct {
		name       string
		reads      []Read
		lastKnown  map[string][]byte
		prev       map[string]Health
		staleAfter time.Duration
		want       want
	}{{
		name:  "all reachable",
		reads: []Read{{Member: "a", Snapshot: fresh}, {Member: "b", Snapshot: snapWithExport("b")}},
		want: want{members: []string{"a", "b"}, exports: []int{1, 1},
			health: []Health{{Member: "a", Reachable: true}, {Member: "b", Reachable: true}}, messages: []string{"", ""}},
	}, {
		name:      "first failure keeps last known, since now truncated to the second in UTC",
		reads:     []Read{{Member: "a", Snapshot: fresh}, {Member: "b", Reason: reasonUnreachable}},
		lastKnown: map[string][]byte{"b": lastB},
		want: want{members: []string{"a", "b"}, exports: []int{1, 1},
			health: []Health{{Member: "a", Reachable: true},
				{Member: "b", Reason: reasonUnreachable, UnreachableSince: mtime(nowSec)}},
			messages: []string{"", "keeping its last known exports"}},
	}, {
		name:      "still down keeps the first failure time",
		reads:     []Read{{Member: "b", Reason: reasonTimeout}},
		lastKnown: map[string][]byte{"b": lastB},
		prev:      map[string]Health{"b": {Member: "b", Reason: reasonUnreachable, UnreachableSince: mtime(earlier)}},
		want: want{members: []string{"b"}, exports: []int{1},
			health:   []Health{{Member: "b", Reason: reasonTimeout, UnreachableSince: mtime(earlier)}},
			messages: []string{"unreachable since " + earlier.Format(time.RFC3339)}},
	}, {
		name:       "before staleAfter: kept, message says until when",
		reads:      []Read{{Member: "b", Reason: reasonUnreachable}},
		lastKnown:  map[string][]byte{"b": lastB},
		prev:       map[string]Health{"b": {Member: "b", UnreachableSince: mtime(earlier)}},
		staleAfter: 2 * time.Hour,
		want: want{members: []string{"b"}, exports: []int{1},
			health:   []Health{{Member: "b", Reason: reasonUnreachable, UnreachableSince: mtime(earlier)}},
			messages: []string{"until " + earlier.Add(2*time.Hour).Format(time.RFC3339)}},
	}, {
		name:       "after staleAfter: exports dropped, namespaces kept",
		reads:      []Read{{Member: "b", Reason: reasonUnreachable}},
		lastKnown:  map[string][]byte{"b": lastB},
		prev:       map[string]Health{"b": {Member: "b", UnreachableSince: mtime(earlier)}},
		staleAfter: time.Hour,
		want: want{members: []string{"b"}, exports: []int{0},
			health:   []Health{{Member: "b", Reason: reasonUnreachable, UnreachableSince: mtime(earlier), ExportsDropped: true}},
			messages: []string{"longer than staleAfter 1h0m0s"}},
	}, {
		name:  "failed without last known contributes nothing",
		reads: []Read{{Member: "a", Snapshot: fresh}, {Member: "b", Reason: reasonConfig}},
		want: want{members: []string{"a"}, exports: []int{1},
			health: []Health{{Member: "a", Reachable: true},
				{Member: "b", Reason: reasonConfig, UnreachableSince: mtime(nowSec)}},
			messages: []string{"", "no snapshot of it was ever committed"}},
	}, {
		name:      "recovery clears since",
		reads:     []Read{{Member: "b", Snapshot: snapWithExport("b")}},
		lastKnown: map[string][]byte{"b": lastB},
		prev:      map[string]Health{"b": {Member: "b", UnreachableSince: mtime(earlier), ExportsDropped: true}},
		want: want{members: []string{"b"}, exports: []int{1},
			health: []Health{{Member: "b", Reachable: true}}, messages: []string{""}},
	}, {
		name:      "a member that was reachable before restarts the clock",
		reads:     []Read{{Member: "b", Reason: reasonUnreachable}},
		lastKnown: map[string][]byte{"b": lastB},
		prev:      map[string]Health{"b": {Member: "b", Reachable: true}},
		want: want{members: []string{"b"}, exports: []int{1},
			health:   []Health{{Member: "b", Reason: reasonUnreachable, UnreachableSince: mtime(nowSec)}},
			messages: []string{"keeping"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			last := LastCommit{Inputs: tt.lastKnown, Health: tt.prev}
			res, err := Resolve(tt.reads, last, now, tt.staleAfter, nil)
			if err != nil {
				t.Fatal(err)
			}
			snaps, health := res.Snapshots, res.Health
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
			if kept := tt.lastKnown["b"]; kept != nil && string(res.Files["b"]) != string(kept) && tt.reads[len(tt.reads)-1].Snapshot == nil {
				t.Errorf("a member that was not read must commit its last snapshot unchanged:\n%s", res.Files["b"])
			}
			// Pure: the same arguments give the same answer.
			again, err := Resolve(tt.reads, last, now, tt.staleAfter, nil)
			if err != nil || !reflect.DeepEqual(res, again) {
				t.Errorf("second call differs: %+v vs %+v (%v)", res, again, err)
			}
		})
	}
}

// A live member whose gateway host did not resolve keeps the addresses of
// its last commit, in what is rendered and in what is committed, and the
// Read it came in is left as it was.
func TestResolveKeepsGatewayAddresses(t *testing.T) {
	committed := snapWithExport("b")
	committed.GatewayAddresses = []string{"192.0.2.7"}
	data, err := Format(committed)
	if err != nil {
		t.Fatal(err)
	}
	live := snapWithExport("b")
	results := []Read{{Member: "b", Snapshot: live, GatewayUnresolved: true}}
	for _, tt := range []struct {
		name string
		last map[string][]byte
		want []string
	}{
		{"committed addresses kept", map[string][]byte{"b": data}, []string{"192.0.2.7"}},
		{"nothing committed: no address", nil, nil},
		{"a committed file that does not load gives none", map[string][]byte{"b": []byte("kind: [")}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Resolve(results, LastCommit{Inputs: tt.last}, time.Now(), 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Snapshots[0].GatewayAddresses; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rendered addresses %v, want %v", got, tt.want)
			}
			if got := res.KeptGateway["b"]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("KeptGateway %v, want %v", got, tt.want)
			}
			if _, ok := res.KeptGateway["b"]; !ok {
				t.Error("KeptGateway does not name the member")
			}
			if tt.want != nil && !strings.Contains(string(res.Files["b"]), tt.want[0]) {
				t.Errorf("the committed file does not hold the kept address:\n%s", res.Files["b"])
			}
			if live.GatewayAddresses != nil {
				t.Error("the Read's snapshot was modified")
			}
		})
	}
}
