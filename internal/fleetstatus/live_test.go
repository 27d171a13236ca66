// SPDX-License-Identifier: Apache-2.0

package fleetstatus

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/test/faults"
)

// A member whose apiserver takes connections and never answers costs
// status readTimeout and shows unreachable: the version is read by
// discovery, which takes no context, and status used to wait on it for
// ever.
func TestStatusDoesNotHangOnAMemberThatNeverAnswers(t *testing.T) {
	defer func(d time.Duration) { readTimeout = d }(readTimeout)
	readTimeout = time.Second
	stuck := faults.NeverAnswers(t)
	set, err := clusters.NewSet(&clusters.Member{Name: "stuck", Config: stuck})
	require.NoError(t, err)

	done := make(chan map[string]liveMember, 1)
	go func() { done <- readMembers(context.Background(), set, "") }()
	select {
	case live := <-done:
		require.Contains(t, live, "stuck")
		assert.Error(t, live["stuck"].err)
		assert.Contains(t, live["stuck"].err.Error(), `member "stuck"`)
	case <-time.After(30 * time.Second):
		t.Fatal("status still waits for the member after 30 s; readTimeout is 1 s")
	}
}
