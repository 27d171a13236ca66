package envtest_test

import (
	"testing"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func FuzzTmpDescribe(f *testing.F) {
	f.Add("a", "b")
	f.Fuzz(func(t *testing.T, ns, name string) {
		u := &unstructured.Unstructured{}
		u.SetNamespace(ns)
		u.SetName(name)
		_ = envtest.Describe(u)
	})
}

func FuzzTmpNamespaces(f *testing.F) {
	f.Add("a")
	f.Fuzz(func(t *testing.T, ns string) {
		u := &unstructured.Unstructured{}
		u.SetNamespace(ns)
		_ = envtest.Namespaces([]*unstructured.Unstructured{u, nil})
	})
}
