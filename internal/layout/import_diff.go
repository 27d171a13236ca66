// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"github.com/mcs-gitops/mcs-gitops/internal/change"
)

// fieldLines says, field by field, how the merged import of a service
// changed, old -> new: "port http 8000/TCP -> 8001/TCP", "port grpc
// added (9090/TCP)", "sessionAffinity None -> ClientIP".
func fieldLines(fields []change.Field) []string {
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		out = append(out, f.String())
	}
	return out
}
