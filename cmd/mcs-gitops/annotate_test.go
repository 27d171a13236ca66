// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcs-gitops/mcs-gitops/clusters/snapshot"
)

// A snapshot warning's position: a file diff --base names with its
// revision ("rev:path") is the path in the checkout, whose own colon does
// not end the file name.
func TestWarningPosition(t *testing.T) {
	for w, want := range map[string]snapshot.Position{
		"inputs/a.yaml:12: member a: Service x/y: has no label":                       {File: "inputs/a.yaml", Line: 12},
		"origin/main:deploy/mcs/inputs/a.yaml:7: member a: Service x/y: has no label": {File: "deploy/mcs/inputs/a.yaml", Line: 7},
	} {
		pos, msg := warningPosition(w)
		assert.Equal(t, want, pos, w)
		assert.Equal(t, "member a: Service x/y: has no label", msg)
	}
	pos, msg := warningPosition("no position here")
	assert.Equal(t, snapshot.Position{}, pos)
	assert.Equal(t, "no position here", msg)
}
