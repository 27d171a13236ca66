// SPDX-License-Identifier: Apache-2.0

package clusters_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcs-gitops/mcs-gitops/clusters"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// What reading and watching members reports goes to the logger the caller
// gives (the one --log-format and --log-level configure), naming the
// member, not to the process-wide default.
func TestMembersLogToTheInjectedLogger(t *testing.T) {
	var injected, global bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, nil)))
	cfg := &v1alpha1.ClusterSet{Spec: v1alpha1.ClusterSetSpec{Members: []v1alpha1.Member{
		{Name: "cluster-9", Kubeconfig: v1alpha1.KubeconfigRef{Path: "does-not-exist.yaml"}},
	}}}
	set := clusters.Connect(context.Background(), cfg, clusters.ConnectOptions{
		BaseDir: t.TempDir(), Log: slog.New(slog.NewJSONHandler(&injected, nil)),
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := set.Watch(ctx, func(string) {}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(injected.String(), `"msg":"not watching member: it has no client"`) ||
		!strings.Contains(injected.String(), `"member":"cluster-9"`) {
		t.Errorf("injected logger got:\n%s", injected.String())
	}
	if global.Len() != 0 {
		t.Errorf("the default logger got:\n%s", global.String())
	}
}
