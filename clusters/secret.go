// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// DefaultSecretKey is the Cluster API convention for <cluster>-kubeconfig
// Secrets, used when ref.Key is empty.
const DefaultSecretKey = "value"

// ReadSecretKey returns one key of a Secret. Errors name the Secret, the key
// and the keys that do exist, never a value.
func ReadSecretKey(ctx context.Context, c client.Reader, ref v1alpha1.SecretKeyRef) ([]byte, error) {
	key := ref.Key
	if key == "" {
		key = DefaultSecretKey
	}
	where := fmt.Sprintf("Secret %s/%s", ref.Namespace, ref.Name)
	if c == nil {
		return nil, fmt.Errorf("%s: no client to read it with", where)
	}
	var sec corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &sec); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("%s does not exist", where)
		case apierrors.IsForbidden(err):
			return nil, fmt.Errorf("%s: reading it is forbidden: %w", where, err)
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	v, ok := sec.Data[key]
	if !ok {
		keys := make([]string, 0, len(sec.Data))
		for k := range sec.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return nil, fmt.Errorf("%s has no key %q (keys: %s)", where, key, strings.Join(keys, ", "))
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("%s key %q is empty", where, key)
	}
	return v, nil
}
