// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoopCommit(t *testing.T) {
	by := RenderedBy{Version: "v0.3.0", Layout: 1}
	msg := Message(MessageInput{Next: nil, Changes: &Changes{Written: []string{"clusters/a/x.yaml"}},
		Trailers: [][2]string{{SnapshotDigestTrailer, "sha256:0"}, by.Trailer()}})
	got, loop, err := LoopCommit(msg)
	require.NoError(t, err)
	assert.True(t, loop)
	assert.Equal(t, by, got, "what a commit's trailer says reads back")

	for name, tc := range map[string]struct {
		msg  string
		by   RenderedBy
		loop bool
		err  string
	}{
		"a person's commit":            {msg: "fix a typo\n\nin the README\n"},
		"before the trailer":           {msg: "update\n\nSnapshot-Digest: sha256:0\n", loop: true},
		"devel build":                  {msg: "x\n\nRendered-By: mcs-gitops (devel); layout 1\n", by: RenderedBy{"(devel)", 1}, loop: true},
		"trailer-like line in a body":  {msg: "x\n\nRendered-By: mcs-gitops v1; layout 1\n\nbody\n"},
		"another tool":                 {msg: "x\n\nRendered-By: kustomize v5; layout 1\n", loop: true, err: `want "mcs-gitops <version>; layout <n>"`},
		"no layout":                    {msg: "x\n\nRendered-By: mcs-gitops v1\n", loop: true, err: "Rendered-By trailer"},
		"negative layout":              {msg: "x\n\nRendered-By: mcs-gitops v1; layout -1\n", loop: true, err: "Rendered-By trailer"},
		"layout not a number":          {msg: "x\n\nRendered-By: mcs-gitops v1; layout two\n", loop: true, err: "Rendered-By trailer"},
		"no trailing newline":          {msg: "x\n\nRendered-By: mcs-gitops v1.2.3; layout 4", by: RenderedBy{"v1.2.3", 4}, loop: true},
		"subject only, like a trailer": {msg: "Rendered-By: mcs-gitops v1; layout 1\n", by: RenderedBy{"v1", 1}, loop: true},
	} {
		t.Run(name, func(t *testing.T) {
			by, loop, err := LoopCommit(tc.msg)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.by, by)
			assert.Equal(t, tc.loop, loop)
		})
	}
}

func TestRenderedByDescribe(t *testing.T) {
	assert.Equal(t, "mcs-gitops v0.3.0 (layout 1)", RenderedBy{"v0.3.0", 1}.Describe())
	assert.Equal(t, "an mcs-gitops from before versions were recorded (layout 0)", RenderedBy{}.Describe())
}

// FuzzLoopCommit: any message reads without panicking, and a Rendered-By
// it accepts is written back as the same trailer.
func FuzzLoopCommit(f *testing.F) {
	f.Add("x\n\nSnapshot-Digest: sha256:0\nRendered-By: mcs-gitops v0.3.0; layout 1\n")
	f.Add("Rendered-By: mcs-gitops ; layout 1")
	f.Fuzz(func(t *testing.T, msg string) {
		by, _, err := LoopCommit(msg)
		if err != nil || by == (RenderedBy{}) {
			return
		}
		again, loop, err := LoopCommit("x\n\n" + RenderedByTrailer + ": " + by.String() + "\n")
		require.NoError(t, err)
		assert.True(t, loop)
		assert.Equal(t, by, again)
	})
}
