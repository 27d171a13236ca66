// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// SecretRefs lists every Secret a config reads credentials from (member
// kubeconfigs, Git token, SSH key, known hosts, the signing key and its
// passphrase, verify keys from a Secret, the review forge's token or
// GitHub App key), each once, sorted.
func SecretRefs(cfg *v1alpha1.ClusterSet) []v1alpha1.SecretKeyRef {
	var out []v1alpha1.SecretKeyRef
	add := func(r *v1alpha1.SecretKeyRef) {
		if r == nil {
			return
		}
		k := v1alpha1.SecretKeyRef{Namespace: r.Namespace, Name: r.Name}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	for _, m := range cfg.Spec.Members {
		add(m.Kubeconfig.SecretRef)
	}
	a := cfg.Spec.Git.Auth
	creds := []*v1alpha1.CredentialSource{a.Token, a.SSHKey, a.KnownHosts, cfg.Spec.Review.Forge.Token}
	if app := cfg.Spec.Review.Forge.GitHubApp; app != nil {
		creds = append(creds, app.PrivateKey)
	}
	if s := cfg.Spec.Git.Signing; s != nil {
		creds = append(creds, s.Key, s.Passphrase)
	}
	if v := cfg.Spec.Git.Verify; v != nil {
		for _, k := range v.Keys {
			creds = append(creds, k.Source)
		}
	}
	for _, cs := range creds {
		if cs != nil {
			add(cs.SecretRef)
		}
	}
	slices.SortFunc(out, func(a, b v1alpha1.SecretKeyRef) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// WatchSecrets calls changed whenever one of the Secrets' data changes, it
// is created or it is deleted, until ctx ends. Each Secret is read with
// get and followed with a watch on its name alone, the two verbs a Role
// limited by resourceNames can grant; neither lists Secrets. A watch that
// fails is retried with backoff, and the Secret read again first, so a
// change made while it was down is still seen. Values are hashed, never
// kept or logged.
func WatchSecrets(ctx context.Context, cs kubernetes.Interface, refs []v1alpha1.SecretKeyRef, log *slog.Logger, changed func(v1alpha1.SecretKeyRef)) {
	if log == nil {
		log = slog.Default()
	}
	done := make(chan struct{})
	for _, r := range refs {
		go func() {
			defer func() { done <- struct{}{} }()
			watchSecret(ctx, cs, r, log.With("secret", r.Namespace+"/"+r.Name), changed)
		}()
	}
	for range refs {
		<-done
	}
}

// secretState is what a Secret's content was last seen as: absent, or
// its data's hash.
type secretState struct {
	exists bool
	sum    [32]byte
}

func stateOf(s *corev1.Secret) secretState {
	if s == nil {
		return secretState{}
	}
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(s.Data)) {
		fmt.Fprintf(h, "%d:%s%d:", len(k), k, len(s.Data[k]))
		h.Write(s.Data[k])
	}
	var st secretState
	st.exists = true
	copy(st.sum[:], h.Sum(nil))
	return st
}

func watchSecret(ctx context.Context, cs kubernetes.Interface, ref v1alpha1.SecretKeyRef, log *slog.Logger, changed func(v1alpha1.SecretKeyRef)) {
	api := cs.CoreV1().Secrets(ref.Namespace)
	var last *secretState
	backoff := time.Second
	for ctx.Err() == nil {
		rv, st, err := getSecret(ctx, api.Get, ref.Name)
		if err == nil {
			if last != nil && *last != st {
				log.Info("credential Secret changed")
				changed(ref)
			}
			last = &st
			err = follow(ctx, api.Watch, ref.Name, rv, &st, func() {
				log.Info("credential Secret changed")
				changed(ref)
			})
			last = &st
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Warn("watching credential Secret", "err", err, "retry", backoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if err != nil {
			backoff = min(2*backoff, time.Minute)
		} else {
			backoff = time.Second
		}
	}
}

func getSecret(ctx context.Context, get func(context.Context, string, metav1.GetOptions) (*corev1.Secret, error), name string) (string, secretState, error) {
	s, err := get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Watching from "" would replay nothing useful; any creation is
		// an event from now on.
		return "", secretState{}, nil
	}
	if err != nil {
		return "", secretState{}, err
	}
	return s.ResourceVersion, stateOf(s), nil
}

// follow watches one Secret by name from rv, updating st and calling
// changed when its content changes, until the watch ends.
func follow(ctx context.Context, watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), name, rv string, st *secretState, changed func()) error {
	w, err := watchFn(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: rv, AllowWatchBookmarks: true,
	})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			var next secretState
			switch ev.Type {
			case watch.Added, watch.Modified:
				s, ok := ev.Object.(*corev1.Secret)
				if !ok {
					continue
				}
				next = stateOf(s)
			case watch.Deleted:
			case watch.Error:
				return errors.New(apierrors.FromObject(ev.Object).Error())
			default:
				continue
			}
			if next != *st {
				*st = next
				changed()
			}
		}
	}
}
