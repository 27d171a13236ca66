// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mcs-gitops/mcs-gitops/render"
)

// TestImportReadyNamesPartialPorts: a member's ServiceImport stays Ready
// when one of its ports answers in only some of its families, and says
// which clients get no answer; a member in none of the port's families is
// told nothing here reaches it.
func TestImportReadyNamesPartialPorts(t *testing.T) {
	partial := []render.PartialPort{{Port: render.ImportPort{Name: "tcp2", Port: 4242, Protocol: "TCP"}, Families: []string{"IPv6"}, Exporters: []string{"cluster-b"}}}
	si := func(version string, fams ...any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"ipFamilies": fams}}}
		u.SetAPIVersion("multicluster.x-k8s.io/" + version)
		u.SetKind("ServiceImport")
		return u
	}
	for _, c := range []struct {
		fams []any
		want string
	}{
		{[]any{"IPv4", "IPv6"}, "IPv4 clients get no answer on it"},
		{[]any{"IPv4"}, "no client here can reach it"},
	} {
		got := importReady(si("v1beta1", c.fams...), render.NotServed{}, partial)
		if got == nil || got.Status != "True" || !strings.Contains(got.Message, `port "tcp2" 4242/TCP is served over IPv6 only`) || !strings.Contains(got.Message, c.want) {
			t.Errorf("families %v: Ready = %+v; want True, naming the port and %q", c.fams, got, c.want)
		}
	}
	if got := importReady(si("v1beta1", "IPv6"), render.NotServed{}, partial); got.Message != "the ServiceImport and its derived Service are applied" {
		t.Errorf("IPv6-only member: %q", got.Message)
	}
	if got := importReady(si("v1alpha1", "IPv4", "IPv6"), render.NotServed{}, partial); got != nil {
		t.Errorf("v1alpha1 has no conditions: %+v", got)
	}
}
