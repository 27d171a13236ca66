// SPDX-License-Identifier: Apache-2.0

package lineage

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
)

// Event writes a Warning Event regarding the record's ConfigMap: the
// loop's object in the management cluster, where `kubectl describe` and
// event exporters show what waits for a person (a refused branch, a held
// withdrawal). The ConfigMap may not exist yet (a refusal before the
// first push); the Event names it all the same.
func (c *ConfigMap) Event(ctx context.Context, reason, action, note string, now time.Time) error {
	host, _ := os.Hostname()
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: fmt.Sprintf("%s.%s", c.Name, rand.String(8))},
		EventTime:  metav1.NewMicroTime(now),
		// The Event API caps a note at 1 KiB.
		Note:                truncate(note, 1024),
		Reason:              reason,
		Action:              action,
		Type:                corev1.EventTypeWarning,
		ReportingController: "mcs-gitops",
		ReportingInstance:   truncate("mcs-gitops-"+host, 128),
		Regarding:           corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: c.Namespace, Name: c.Name},
	}
	if err := c.Client.Create(ctx, ev); err != nil {
		return fmt.Errorf("writing an Event on %s: %w", c.Where(), err)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
