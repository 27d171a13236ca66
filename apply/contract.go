// SPDX-License-Identifier: Apache-2.0

package apply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkContract refuses every object outside the member's contract (what
// the renderer may emit) and returns their keys. Such an object is in a
// commit nobody rendered; it is reported like an object the apiserver
// refused, and nothing of it is sent.
func (a *Applier) checkContract(objects []*unstructured.Unstructured, desired []desiredObject, res *Result) map[objKey]bool {
	violations := a.Memory.checkContract(a.Contract, objects)
	if len(violations) == 0 {
		return nil
	}
	outside := map[objKey]bool{}
	for _, v := range violations {
		d := desired[v.Index] // prepare keeps the order and refuses nil
		outside[d.key] = true
		res.Refused = append(res.Refused, Refusal{
			Object: v.Object, Service: serviceOf(d.obj),
			Message: "not a shape mcs-gitops renders, refused before applying: " + v.Reason,
		})
	}
	a.log().Warn("objects outside the rendered contract refused", "count", len(violations), "first", violations[0].String())
	return outside
}
