// SPDX-License-Identifier: Apache-2.0

package doctor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/internal/member/doctor"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/faults"
)

// A member whose apiserver takes connections and never answers costs
// doctor its timeout, and is reported unreachable: discovery takes no
// context, and doctor used to wait on it for ever.
func TestDoctorDoesNotHangOnAMemberThatNeverAnswers(t *testing.T) {
	stuck := faults.NeverAnswers(t)
	set, err := clusters.NewSet(&clusters.Member{Name: "stuck", Config: stuck})
	require.NoError(t, err)
	cfg := &v1alpha1.ClusterSet{Spec: v1alpha1.ClusterSetSpec{Members: []v1alpha1.Member{{Name: "stuck"}}}}

	done := make(chan *doctor.Report, 1)
	go func() {
		done <- doctor.Run(context.Background(), doctor.Options{Config: cfg, Members: set, Timeout: time.Second})
	}()
	select {
	case r := <-done:
		require.Len(t, r.Members, 1)
		reach := r.Members[0].Checks[1]
		assert.Equal(t, doctor.CheckReachable, reach.Name)
		assert.Equal(t, doctor.Error, reach.Status)
		assert.Contains(t, reach.Message, stuck.Host)
		assert.Equal(t, 1, r.Errors)
	case <-time.After(30 * time.Second):
		t.Fatal("doctor still waits for the member after 30 s; its timeout is 1 s")
	}
}
