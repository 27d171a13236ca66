// SPDX-License-Identifier: Apache-2.0

package buildinfo

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteText writes i for people, one fact a line, the way a bug report
// should quote it.
func (i Info) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "version:\t%s\n", i.Version)
	rev := i.Revision
	if rev == "" {
		rev = "unknown"
	}
	if i.Modified {
		rev += " (modified)"
	}
	fmt.Fprintf(tw, "revision:\t%s\n", rev)
	if !i.CommitTime.IsZero() {
		fmt.Fprintf(tw, "commit time:\t%s\n", i.CommitTime.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(tw, "go:\t%s\n", i.GoVersion)
	if i.Platform != "" {
		fmt.Fprintf(tw, "platform:\t%s\n", i.Platform)
	}
	for _, l := range Libraries {
		if v, ok := i.Modules[l]; ok {
			fmt.Fprintf(tw, "%s:\t%s\n", l, v)
		}
	}
	return tw.Flush()
}
