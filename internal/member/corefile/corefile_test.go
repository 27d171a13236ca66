// SPDX-License-Identifier: Apache-2.0

package corefile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kubeadm is the Corefile kubeadm writes, the one most members run.
const kubeadm = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`

func TestAddMulticlusterToKubeadm(t *testing.T) {
	assert.False(t, Serves(kubeadm, "clusterset.local"))
	got, err := AddMulticluster(kubeadm, "clusterset.local")
	require.NoError(t, err)
	want := strings.Replace(kubeadm,
		"    kubernetes cluster.local in-addr.arpa ip6.arpa {\n",
		"    kubernetes cluster.local in-addr.arpa ip6.arpa clusterset.local {\n       multicluster clusterset.local\n", 1)
	assert.Equal(t, want, got)
	assert.True(t, Serves(got, "clusterset.local"))
	again, err := AddMulticluster(got, "clusterset.local")
	require.NoError(t, err)
	assert.Equal(t, got, again, "a second edit changes nothing")
}

func TestAddMulticlusterShapes(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"no block": {
			in:   ".:53 {\n  kubernetes cluster.local\n  forward . 1.1.1.1\n}\n",
			want: ".:53 {\n  kubernetes cluster.local clusterset.local {\n      multicluster clusterset.local\n  }\n  forward . 1.1.1.1\n}\n",
		},
		"zone there, option missing": {
			in:   ".:53 {\n\tkubernetes cluster.local clusterset.local {\n\t\tttl 5\n\t}\n}\n",
			want: ".:53 {\n\tkubernetes cluster.local clusterset.local {\n\t\tmulticluster clusterset.local\n\t\tttl 5\n\t}\n}\n",
		},
		"another multicluster zone kept": {
			in:   ".:53 {\n  kubernetes cluster.local other.local {\n    multicluster other.local\n  }\n}\n",
			want: ".:53 {\n  kubernetes cluster.local other.local clusterset.local {\n    multicluster other.local clusterset.local\n  }\n}\n",
		},
		"comment kept": {
			in:   ".:53 {\n  kubernetes cluster.local { # ours\n    ttl 30\n  }\n}\n",
			want: ".:53 {\n  kubernetes cluster.local clusterset.local { # ours\n    multicluster clusterset.local\n    ttl 30\n  }\n}\n",
		},
		"the cluster.local one of two": {
			in:   "a.example {\n  kubernetes a.example\n}\n.:53 {\n  kubernetes cluster.local {\n  }\n}\n",
			want: "a.example {\n  kubernetes a.example\n}\n.:53 {\n  kubernetes cluster.local clusterset.local {\n      multicluster clusterset.local\n  }\n}\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := AddMulticluster(tc.in, "clusterset.local")
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.True(t, Serves(got, "clusterset.local"))
		})
	}
}

func TestAddMulticlusterWithoutKubernetesPlugin(t *testing.T) {
	_, err := AddMulticluster(".:53 {\n  forward . 1.1.1.1\n}\n", "clusterset.local")
	assert.ErrorContains(t, err, "no kubernetes plugin")
}

// A multicluster zone the plugin is not authoritative for does not serve it:
// CoreDNS refuses that configuration.
func TestServesNeedsBoth(t *testing.T) {
	assert.False(t, Serves(".:53 {\n  kubernetes cluster.local {\n    multicluster clusterset.local\n  }\n}\n", "clusterset.local"))
	assert.False(t, Serves(".:53 {\n  kubernetes cluster.local clusterset.local\n}\n", "clusterset.local"))
	assert.False(t, Serves(".:53 {\n  # kubernetes cluster.local clusterset.local { multicluster clusterset.local }\n}\n", "clusterset.local"))
}

// Whatever the Corefile, an edit either fails or serves the zone, changes
// nothing on a second run, and keeps every line it had.
func FuzzAddMulticluster(f *testing.F) {
	f.Add(kubeadm)
	f.Add(".:53 {\n  kubernetes cluster.local\n}\n")
	f.Add("kubernetes {\n}\n}")
	f.Add("kubernetes a { multicluster b }")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := AddMulticluster(in, "clusterset.local")
		if err != nil {
			return
		}
		if !Serves(got, "clusterset.local") {
			t.Fatalf("edited Corefile does not serve the zone:\n%s", got)
		}
		again, err := AddMulticluster(got, "clusterset.local")
		if err != nil || again != got {
			t.Fatalf("second edit changed it (%v):\n%s\n---\n%s", err, got, again)
		}
		if n, m := len(lines(in)), len(lines(got)); m < n || m > n+2 {
			t.Fatalf("edit went from %d to %d lines", n, m)
		}
	})
}
