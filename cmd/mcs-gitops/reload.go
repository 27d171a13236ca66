// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// configPoll is how often run looks at its config file. A mounted
// ConfigMap changes by a symlink swap that the kubelet makes up to a
// minute after the update, so polling costs nothing in latency.
var configPoll = 5 * time.Second

// errReload ends a Run so that the controller starts again on new inputs.
type errReload struct{ why string }

func (e errReload) Error() string { return "reload: " + e.why }

// watchInputs calls reload once, with the reason, when the config file's
// content differs from seen or when a Secret the config reads credentials
// from changes (a member joined, a token rotated), and returns when ctx
// ends.
func (f *loopFlags) watchInputs(ctx context.Context, e *env, seen []byte, reload func(why string)) {
	if e.mgmtConfig != nil {
		if refs := clusters.SecretRefs(e.cfg); len(refs) > 0 {
			cs, err := kubernetes.NewForConfig(e.mgmtConfig)
			if err != nil {
				e.log.Error("cannot watch credential Secrets; a rotation needs a restart", "err", err)
			} else {
				go clusters.WatchSecrets(ctx, cs, refs, e.log, func(ref v1alpha1.SecretKeyRef) {
					reload(fmt.Sprintf("Secret %s/%s changed", ref.Namespace, ref.Name))
				})
			}
		}
	}
	t := time.NewTicker(configPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			data, err := os.ReadFile(f.config)
			if err == nil && !bytes.Equal(data, seen) {
				reload(f.config + " changed")
				return
			}
		}
	}
}

// runReloading runs the controller on e until ctx ends, starting it again
// on fresh inputs whenever watchInputs, or run through reload (the
// inventory's watch, started once its members are in force), reports a
// change: the config is
// read and checked again, every member reconnected (credentials read
// anew) and the repository reopened. A cycle in progress finishes first.
// A config that no longer loads is logged and the running one kept.
func (f *loopFlags) runReloading(ctx context.Context, e *env, connect func(context.Context) (*env, error),
	run func(ctx context.Context, e *env, reload func(why string)) error) error {
	seen := e.configBytes
	for {
		rctx, cancel := context.WithCancelCause(ctx)
		reload := func(why string) { cancel(errReload{why}) }
		go f.watchInputs(rctx, e, seen, reload)
		err := run(rctx, e, reload)
		cause := context.Cause(rctx)
		cancel(nil)
		var r errReload
		if ctx.Err() != nil || !errors.As(cause, &r) {
			return err
		}
		e.log.Info("reloading: reconnecting to every member", "why", r.why)
		next, cerr := connect(ctx)
		if cerr != nil {
			e.log.Error("the new config does not load; running on the previous one", "config", f.config, "err", cerr)
			if data, rerr := os.ReadFile(f.config); rerr == nil {
				seen = data
			}
			continue
		}
		e, seen = next, next.configBytes
	}
}
