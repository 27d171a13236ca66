// SPDX-License-Identifier: Apache-2.0

package lineage

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Store is where the record lives.
type Store interface {
	// Load returns the record; nil when there is none yet.
	Load(ctx context.Context) (*Record, error)
	// Save writes what the loop pushed (the record's data), keeping the
	// last acceptance as it is.
	Save(ctx context.Context, r *Record) error
	// Where names the store in messages: how a person finds the record.
	Where() string
}

// ConfigMap is a Store in a ConfigMap of the management cluster.
type ConfigMap struct {
	Client          client.Client
	Namespace, Name string
}

// Where is "ConfigMap <namespace>/<name>".
func (c *ConfigMap) Where() string {
	return fmt.Sprintf("ConfigMap %s/%s", c.Namespace, c.Name)
}

func (c *ConfigMap) key() client.ObjectKey {
	return client.ObjectKey{Namespace: c.Namespace, Name: c.Name}
}

// Load reads the ConfigMap; a missing one is no record.
func (c *ConfigMap) Load(ctx context.Context) (*Record, error) {
	var cm corev1.ConfigMap
	err := c.Client.Get(ctx, c.key(), &cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lineage record (%s): %w", c.Where(), err)
	}
	return decode(&cm)
}

// Save writes r's data into the ConfigMap, creating it when missing.
// The acceptance annotations on the ConfigMap stay as they are: only a
// person writes those (Accept).
func (c *ConfigMap) Save(ctx context.Context, r *Record) error {
	keep := *r
	keep.Accepted = nil
	return c.update(ctx, func(cm *corev1.ConfigMap) { encode(&keep, cm) })
}

// update applies edit to the ConfigMap, created when missing, and retries
// on a conflict with another writer.
func (c *ConfigMap) update(ctx context.Context, edit func(*corev1.ConfigMap)) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cm corev1.ConfigMap
		err := c.Client.Get(ctx, c.key(), &cm)
		if apierrors.IsNotFound(err) {
			cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "mcs-gitops"}}}
			edit(&cm)
			return c.Client.Create(ctx, &cm)
		}
		if err != nil {
			return err
		}
		edit(&cm)
		return c.Client.Update(ctx, &cm)
	})
	if err != nil {
		return fmt.Errorf("writing the lineage record (%s): %w", c.Where(), err)
	}
	return nil
}

// Accept records a person's word that the branch of the tree named is to
// be taken as it is, or from commit (hex) on when commit is not "": the
// loop stops refusing it and starts the record again from there. by is
// who (as the management cluster authenticates them), reason why; both
// stay on the ConfigMap until the next acceptance.
func (c *ConfigMap) Accept(ctx context.Context, repository, branch, path, commit, by, reason string, now time.Time) (*Record, error) {
	if commit != "" && !isHash(commit) {
		return nil, fmt.Errorf("--commit %q is not a full commit hash (40 hex digits)", commit)
	}
	var out *Record
	err := c.update(ctx, func(cm *corev1.ConfigMap) {
		previous := cm.Data[keyCommit]
		out = &Record{Repository: repository, Branch: branch, Path: path, Commit: commit,
			Accepted: &Acceptance{By: by, Reason: reason, At: now, Previous: previous}}
		encode(out, cm)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
