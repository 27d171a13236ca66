// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// Scheme returns a new scheme with the types member clients read and write:
// client-go's built-ins and both served versions of the MCS API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(mcsv1alpha1.AddToScheme(s))
	utilruntime.Must(mcsv1beta1.AddToScheme(s))
	return s
}
