// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is the layout of the rendered repository: which paths hold which
// files, in which format. It goes up when a release moves or reformats
// anything the loop commits (docs/versioning.md); a release that only
// renders differently (a bug fixed, a field added) keeps it. Layout 1 is
// the first one recorded: inputs/<member>/ split per service, one file per
// rendered object, status/ as it is today.
const Version = 1

// Trailers of the loop's commits: SnapshotDigestTrailer names the inputs a
// commit was rendered from, RenderedByTrailer the build that rendered
// them. A commit with either is the loop's.
const (
	SnapshotDigestTrailer = "Snapshot-Digest"
	RenderedByTrailer     = "Rendered-By"
)

// RenderedBy is the build that rendered a commit: "mcs-gitops v0.3.0;
// layout 1" in its Rendered-By trailer. The zero value is a loop commit
// from before the trailer existed (layout 0, version unknown).
type RenderedBy struct {
	Version string
	Layout  int
}

// String is the trailer's value.
func (r RenderedBy) String() string {
	return fmt.Sprintf("mcs-gitops %s; layout %d", r.Version, r.Layout)
}

// Describe names the build for a person: "mcs-gitops v0.3.0 (layout 1)",
// or, for a commit that recorded none, what is known of it.
func (r RenderedBy) Describe() string {
	if r.Version == "" {
		return "an mcs-gitops from before versions were recorded (layout 0)"
	}
	return fmt.Sprintf("mcs-gitops %s (layout %d)", r.Version, r.Layout)
}

// Trailer is the Rendered-By trailer of a message.
func (r RenderedBy) Trailer() [2]string { return [2]string{RenderedByTrailer, r.String()} }

// LoopCommit reads a commit message's trailers: whether the loop wrote it
// (a Snapshot-Digest or Rendered-By trailer), and which build rendered
// it. A loop commit without Rendered-By gives the zero RenderedBy. A
// Rendered-By that does not parse is an error naming it: a commit whose
// renderer cannot be told must not be taken for an old one and migrated.
func LoopCommit(message string) (by RenderedBy, loop bool, err error) {
	for _, line := range trailerLines(message) {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch key {
		case SnapshotDigestTrailer:
			loop = true
		case RenderedByTrailer:
			if by, err = parseRenderedBy(value); err != nil {
				return RenderedBy{}, true, err
			}
			loop = true
		}
	}
	return by, loop, nil
}

func parseRenderedBy(v string) (RenderedBy, error) {
	bad := fmt.Errorf("%s trailer %q: want \"mcs-gitops <version>; layout <n>\"", RenderedByTrailer, v)
	name, rest, ok := strings.Cut(v, " ")
	if !ok || name != "mcs-gitops" {
		return RenderedBy{}, bad
	}
	version, layout, ok := strings.Cut(rest, "; layout ")
	if !ok || version == "" || strings.ContainsAny(version, ";\n") {
		return RenderedBy{}, bad
	}
	n, err := strconv.Atoi(layout)
	if err != nil || n < 0 {
		return RenderedBy{}, bad
	}
	return RenderedBy{Version: version, Layout: n}, nil
}

// trailerLines is the message's last paragraph, where Git keeps trailers.
func trailerLines(message string) []string {
	paragraphs := strings.Split(strings.TrimRight(message, "\n"), "\n\n")
	return strings.Split(paragraphs[len(paragraphs)-1], "\n")
}
