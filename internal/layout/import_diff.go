// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"strings"

	"github.com/mcs-gitops/mcs-gitops/internal/change"
)

// fieldLines says, field by field, how the merged import of a service
// changed, old -> new: "port http 8000/TCP -> 8001/TCP", "port grpc
// added (9090/TCP)", "sessionAffinity None -> ClientIP".
func fieldLines(fields []change.Field) []string {
	var out []string
	for _, f := range fields {
		kind, key, _ := strings.Cut(f.Name, " ")
		switch {
		case kind == "port" && f.Old == "":
			out = append(out, fmt.Sprintf("port %s added (%s)", key, f.New))
		case kind == "port" && f.New == "":
			out = append(out, fmt.Sprintf("port %s removed (was %s)", key, f.Old))
		case (kind == "label" || kind == "annotation") && f.Old == "":
			out = append(out, fmt.Sprintf("%s %s=%s added", kind, key, f.New))
		case (kind == "label" || kind == "annotation") && f.New == "":
			out = append(out, fmt.Sprintf("%s %s removed", kind, key))
		default:
			out = append(out, fmt.Sprintf("%s %s -> %s", f.Name, orNone(f.Old), orNone(f.New)))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
