// SPDX-License-Identifier: Apache-2.0

package tenant

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Create creates objs in order through c and fails the test naming the
// first object the server refused. Put namespaces first.
func Create(t testing.TB, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(context.Background(), o); err != nil {
			t.Fatalf("create %T %s/%s: %v", o, o.GetNamespace(), o.GetName(), err)
		}
	}
}
