// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	release "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

const chartDir = "../../charts/mcs-gitops"

// monitoringOverlay is deploy/controller with every monitoring component.
const monitoringOverlay = "testdata/monitoring-overlay"

// TestChartLint: helm lint passes, with no warning, on the default values
// and on the other mode's.
func TestChartLint(t *testing.T) {
	for _, vals := range []map[string]any{nil, {"mode": "cronjob", "grafanaDashboard": map[string]any{"enabled": true}}} {
		lint := action.NewLint()
		lint.Strict = true
		lint.Namespace = "mcs-gitops"
		res := lint.Run([]string{chartDir}, vals)
		assert.Equal(t, 1, res.TotalChartsLinted)
		for _, m := range res.Messages {
			t.Logf("lint %v: %s", vals, m)
		}
		assert.False(t, action.HasWarningsOrErrors(res), "helm lint %v: %v", vals, res.Errors)
	}
}

// TestChartRendersDeploy: the chart and deploy/ are one definition. With
// its defaults the chart renders what kubectl apply -k deploy/controller
// would create (but the Namespace, which helm install --create-namespace
// makes), in cronjob mode what deploy/cronjob holds, and with the
// monitoring objects enabled what the controller with every component
// holds; the alerts and the dashboard are the same bytes in both. Helm's
// own bookkeeping labels and the config checksum are all they may differ
// by.
func TestChartRendersDeploy(t *testing.T) {
	deploy, err := filepath.Abs("../../deploy")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, dir string
		vals      map[string]any
	}{
		{"defaults", filepath.Join(deploy, "controller"), nil},
		{"cronjob", filepath.Join(deploy, "cronjob"), map[string]any{"mode": "cronjob"}},
		{"inventory", "testdata/inventory-overlay", map[string]any{"inventory": map[string]any{"enabled": true}}},
		{"monitoring", monitoringOverlay, map[string]any{
			"serviceMonitor":   map[string]any{"enabled": true},
			"prometheusRule":   map[string]any{"enabled": true},
			"grafanaDashboard": map[string]any{"enabled": true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]map[string]any{}
			for _, u := range build(t, tc.dir) {
				if u.GetKind() == "Namespace" {
					continue
				}
				want[objectKey(u)] = normalizeKustomize(t, u).Object
			}
			got := map[string]map[string]any{}
			for _, u := range renderChart(t, tc.vals) {
				got[objectKey(u)] = normalizeChart(t, u).Object
			}
			assert.ElementsMatch(t, keys(want), keys(got))
			for k, w := range want {
				assert.Equal(t, w, got[k], "%s differs between deploy/ and the chart", k)
			}
		})
	}

	rules, err := os.ReadFile(filepath.Join(deploy, "components/prometheusrule/prometheusrule.yaml"))
	require.NoError(t, err)
	groups, err := os.ReadFile(filepath.Join(chartDir, "files/prometheusrule-groups.yaml"))
	require.NoError(t, err)
	_, spec, ok := strings.Cut(string(rules), "\nspec:\n")
	require.True(t, ok)
	assert.Equal(t, strings.ReplaceAll("\n"+spec, "\n  ", "\n")[1:], string(groups), "the chart's alerts are deploy's, comments and all")
	dashboard, err := os.ReadFile(filepath.Join(deploy, "components/grafana-dashboard/mcs-gitops.json"))
	require.NoError(t, err)
	assert.Equal(t, string(dashboard), mustReadString(t, filepath.Join(chartDir, "files/dashboard.json")), "one dashboard")
	assert.Equal(t, mustReadString(t, filepath.Join(deploy, "components/inventory/providers.json")),
		mustReadString(t, filepath.Join(chartDir, "files/access-providers.json")), "one access provider file")
}

// TestChartValues: what the non-default values change, and values the
// schema refuses, named.
func TestChartValues(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	objs := renderChart(t, map[string]any{
		"mode":             "cronjob",
		"image":            map[string]any{"repository": "registry.example/mcs-gitops", "digest": digest},
		"extraSecretNames": []any{"ssh-known-hosts"},
		"networkPolicy":    map[string]any{"enabled": false},
		"cronjob":          map[string]any{"schedule": "0 * * * *", "pushgateway": "http://pushgateway.monitoring:9091"},
		"podLabels":        map[string]any{"team": "platform"},
	})
	var kinds []string
	for _, u := range objs {
		kinds = append(kinds, u.GetKind())
	}
	assert.NotContains(t, kinds, "NetworkPolicy")
	assert.NotContains(t, kinds, "Deployment")
	cj := &batchv1.CronJob{}
	fromUnstructured(t, find(t, objs, "CronJob", "mcs-gitops", "mcs-gitops-sync"), cj)
	assert.Equal(t, "0 * * * *", cj.Spec.Schedule)
	pod := cj.Spec.JobTemplate.Spec.Template
	assert.Equal(t, "registry.example/mcs-gitops@"+digest, pod.Spec.Containers[0].Image, "a digest pins the image")
	assert.Contains(t, pod.Spec.Containers[0].Args, "--pushgateway=http://pushgateway.monitoring:9091")
	assert.Equal(t, "platform", pod.Labels["team"])
	assert.Equal(t, "mcs-gitops-sync", pod.Labels["app.kubernetes.io/name"], "extra labels never replace the selector's")
	assert.NotEmpty(t, pod.Annotations["checksum/config"], "a changed config rolls the pods")
	role := find(t, objs, "Role", "mcs-gitops", "mcs-gitops")
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	assert.Equal(t, []any{"cluster-1-kubeconfig", "cluster-2-kubeconfig", "git-credentials", "ssh-known-hosts"},
		rules[0].(map[string]any)["resourceNames"], "the Role reads the Secrets the config names, and the extra ones")

	// A config with another member: the Role follows it.
	cs := defaultClusterSet(t)
	spec := cs["spec"].(map[string]any)
	spec["members"] = append(spec["members"].([]any), map[string]any{"name": "cluster-3",
		"kubeconfig": map[string]any{"secretRef": map[string]any{"namespace": "mcs-gitops", "name": "cluster-3-kubeconfig"}}},
		map[string]any{"name": "elsewhere", "kubeconfig": map[string]any{"secretRef": map[string]any{"namespace": "other", "name": "not-here"}}})
	role = find(t, renderChart(t, map[string]any{"clusterSet": cs}), "Role", "mcs-gitops", "mcs-gitops")
	rules, _, _ = unstructured.NestedSlice(role.Object, "rules")
	assert.Equal(t, []any{"cluster-1-kubeconfig", "cluster-2-kubeconfig", "cluster-3-kubeconfig", "git-credentials"},
		rules[0].(map[string]any)["resourceNames"], "a Secret of another namespace is not this Role's")

	for _, tc := range []struct {
		vals map[string]any
		want string
	}{
		{map[string]any{"mode": "both"}, "mode"},
		{map[string]any{"image": map[string]any{"repository": "x", "digest": "latest"}}, "digest"},
		{map[string]any{"replicas": 3}, "replicas"},
		{map[string]any{"networkPolicy": map[string]any{"git": map[string]any{"cidrs": []any{"git.example"}, "ports": []any{443}}}}, "cidrs"},
		{map[string]any{"clusterSet": nil}, "clusterSet"},
	} {
		_, err := renderChartErr(t, tc.vals)
		if assert.Error(t, err, "%v", tc.vals) {
			assert.Contains(t, err.Error(), tc.want, "the error names the value")
		}
	}
}

// TestChartInstall installs the chart with Helm onto a real apiserver, in
// a namespace that enforces Pod Security restricted, in each mode; the
// pods of both templates are admitted there, and uninstall removes what
// install made.
func TestChartInstall(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	ctx := context.Background()
	installCRDFile(t, c, "testdata/monitoring.coreos.com_servicemonitors.yaml")
	installCRDFile(t, c, "testdata/monitoring.coreos.com_prometheusrules.yaml")
	require.NoError(t, c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mcs-gitops",
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, c.WriteKubeconfig(kubeconfig))
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	ns := "mcs-gitops"
	flags.Namespace = &ns
	cfg := action.NewConfiguration()
	require.NoError(t, cfg.Init(flags, ns, "secret"))
	ch := loadChart(t)

	inst := action.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace = "mcs-gitops", ns
	inst.WaitStrategy = kube.HookOnlyStrategy
	inst.Timeout = time.Minute
	_, err := inst.RunWithContext(ctx, ch, map[string]any{
		"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true},
		"grafanaDashboard": map[string]any{"enabled": true},
	})
	require.NoError(t, err, "helm install")
	deployment := &appsv1.Deployment{}
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mcs-gitops"}, deployment))
	for _, name := range []string{"mcs-gitops-config", "mcs-gitops-dashboard"} {
		require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{}), name)
	}

	up := action.NewUpgrade(cfg)
	up.Namespace = ns
	up.WaitStrategy = kube.HookOnlyStrategy
	_, err = up.RunWithContext(ctx, "mcs-gitops", ch, map[string]any{"mode": "cronjob"})
	require.NoError(t, err, "helm upgrade to cronjob mode")
	cronjob := &batchv1.CronJob{}
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mcs-gitops-sync"}, cronjob))
	err = c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mcs-gitops"}, &appsv1.Deployment{})
	assert.True(t, client.IgnoreNotFound(err) == nil && err != nil, "the upgrade to cronjob mode removed the Deployment: %v", err)

	assertRestrictedAdmits(t, c, ns, map[string]corev1.PodTemplateSpec{
		"the installed Deployment": deployment.Spec.Template,
		"the installed CronJob":    cronjob.Spec.JobTemplate.Spec.Template,
	})

	un := action.NewUninstall(cfg)
	un.WaitStrategy = kube.HookOnlyStrategy
	_, err = un.Run("mcs-gitops")
	require.NoError(t, err, "helm uninstall")
	err = c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mcs-gitops-sync"}, &batchv1.CronJob{})
	assert.True(t, client.IgnoreNotFound(err) == nil && err != nil, "uninstall removed the CronJob: %v", err)
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.LoadDir(chartDir)
	require.NoError(t, err)
	return ch
}

// renderChart is helm template: the release mcs-gitops in the namespace
// mcs-gitops, as docs/running.md installs it.
func renderChart(t *testing.T, vals map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderChartErr(t, vals)
	require.NoError(t, err)
	return objs
}

func renderChartErr(t *testing.T, vals map[string]any) ([]*unstructured.Unstructured, error) {
	t.Helper()
	inst := action.NewInstall(action.NewConfiguration())
	inst.DryRunStrategy = action.DryRunClient
	inst.Replace = true
	inst.ReleaseName, inst.Namespace = "mcs-gitops", "mcs-gitops"
	// The oldest Kubernetes the chart admits (Chart.yaml kubeVersion);
	// without it a test binary's helm assumes v1.20.
	kv, err := common.ParseKubeVersion("v1.33.0")
	require.NoError(t, err)
	inst.KubeVersion = kv
	rel, err := inst.Run(loadChart(t), vals)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(rel.(*release.Release).Manifest, -1) {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object), doc)
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs, nil
}

func defaultClusterSet(t *testing.T) map[string]any {
	var vals map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(mustReadString(t, filepath.Join(chartDir, "values.yaml"))), &vals))
	return vals["clusterSet"].(map[string]any)
}

func objectKey(u *unstructured.Unstructured) string {
	return u.GetKind() + "/" + u.GetNamespace() + "/" + configMapName.ReplaceAllString(u.GetName(), "$1")
}

// configMapName is kustomize's generated name: the config's name and a
// hash of its content, which the chart replaces with a checksum annotation.
var configMapName = regexp.MustCompile(`^(mcs-gitops-config)-[a-z0-9]{10}$`)

var helmLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"}

func normalizeChart(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	u = viaJSON(t, u)
	l := u.GetLabels()
	for _, k := range helmLabels {
		delete(l, k)
	}
	u.SetLabels(l)
	for _, path := range [][]string{{"spec", "template", "metadata", "annotations"}, {"spec", "jobTemplate", "spec", "template", "metadata", "annotations"}} {
		if a, ok, _ := unstructured.NestedStringMap(u.Object, path...); ok {
			delete(a, "checksum/config")
			if len(a) == 0 {
				unstructured.RemoveNestedField(u.Object, path...)
			} else {
				require.NoError(t, unstructured.SetNestedStringMap(u.Object, a, path...))
			}
		}
	}
	return parseConfig(t, u)
}

func normalizeKustomize(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	u = viaJSON(t, u)
	u.SetName(configMapName.ReplaceAllString(u.GetName(), "$1"))
	for _, path := range [][]string{{"spec", "template", "spec", "volumes"}, {"spec", "jobTemplate", "spec", "template", "spec", "volumes"}} {
		vols, ok, _ := unstructured.NestedSlice(u.Object, path...)
		if !ok {
			continue
		}
		for _, v := range vols {
			if cm, ok := v.(map[string]any)["configMap"].(map[string]any); ok {
				cm["name"] = configMapName.ReplaceAllString(cm["name"].(string), "$1")
			}
		}
		require.NoError(t, unstructured.SetNestedSlice(u.Object, vols, path...))
	}
	return parseConfig(t, u)
}

// viaJSON copies u as the apiserver would read it, so that numbers
// compare whichever decoder produced them.
func viaJSON(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	b, err := json.Marshal(u.Object)
	require.NoError(t, err)
	out := &unstructured.Unstructured{}
	require.NoError(t, out.UnmarshalJSON(b))
	return out
}

// parseConfig replaces the config ConfigMap's text with what it says:
// deploy's file has comments, the chart's is the values re-encoded.
func parseConfig(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	if u.GetKind() != "ConfigMap" || u.GetName() != "mcs-gitops-config" {
		return u
	}
	text, _, _ := unstructured.NestedString(u.Object, "data", "clusterset.yaml")
	var parsed map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(text), &parsed))
	u.Object["data"] = map[string]any{"clusterset.yaml": parsed}
	return u
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func mustReadString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
