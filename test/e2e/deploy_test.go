// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/internal/inventory"
	"github.com/mcs-gitops/mcs-gitops/internal/lineage"
	"github.com/mcs-gitops/mcs-gitops/internal/member/join"
	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
	"github.com/mcs-gitops/mcs-gitops/test/envtest"
)

// serviceMonitorOverlay is a user's overlay: deploy/controller plus the
// optional deploy/components/servicemonitor.
const serviceMonitorOverlay = "../test/e2e/testdata/servicemonitor-overlay"

// prometheusRuleOverlay adds deploy/components/prometheusrule as well.
const prometheusRuleOverlay = "../test/e2e/testdata/prometheusrule-overlay"

// inventoryOverlay and inventoryCronJobOverlay add
// deploy/components/inventory to the controller and to the CronJob.
const (
	inventoryOverlay        = "../test/e2e/testdata/inventory-overlay"
	inventoryCronJobOverlay = "../test/e2e/testdata/inventory-cronjob-overlay"
)

// TestDeployManifests builds every kustomization under deploy/ (and the
// controller with the ServiceMonitor and PrometheusRule components) and has a real apiserver
// validate the result (server-side dry run); then checks what a dry run
// cannot: the workloads' pods pass Pod Security restricted, the Role
// reads only the Secrets the example config names, and the selectors
// and ports that tie the objects together match.
func TestDeployManifests(t *testing.T) {
	c := envtest.Start(t, 1)[0]
	ctx := context.Background()
	root, err := filepath.Abs("../../deploy")
	require.NoError(t, err)
	installCRDFile(t, c, "testdata/monitoring.coreos.com_servicemonitors.yaml")
	installCRDFile(t, c, "testdata/monitoring.coreos.com_prometheusrules.yaml")
	// The Namespace for real, from the manifest: a dry run would leave the
	// namespace without its Pod Security label, and nothing below would be
	// checked against it.
	built := map[string][]*unstructured.Unstructured{}
	ns := find(t, build(t, filepath.Join(root, "base")), "Namespace", "", "mcs-gitops")
	require.Equal(t, "restricted", ns.GetLabels()["pod-security.kubernetes.io/enforce"], "deploy/base/namespace.yaml")
	require.NoError(t, envtest.ServerSideApply(ctx, c.Client, []*unstructured.Unstructured{ns}, false))

	for _, k := range []struct {
		name, dir string
		kinds     []string
	}{
		{"controller", "controller", []string{"Deployment/mcs-gitops/mcs-gitops", "Role/mcs-gitops/mcs-gitops", "ConfigMap",
			"PodDisruptionBudget/mcs-gitops/mcs-gitops", "Service/mcs-gitops/mcs-gitops-metrics", "NetworkPolicy/mcs-gitops/mcs-gitops"}},
		{"cronjob", "cronjob", []string{"CronJob/mcs-gitops/mcs-gitops-sync", "ServiceAccount/mcs-gitops/mcs-gitops", "NetworkPolicy/mcs-gitops/mcs-gitops"}},
		{"controller+servicemonitor", serviceMonitorOverlay, []string{"ServiceMonitor/mcs-gitops/mcs-gitops", "Service/mcs-gitops/mcs-gitops-metrics", "Deployment/mcs-gitops/mcs-gitops"}},
		{"controller+prometheusrule", prometheusRuleOverlay, []string{"PrometheusRule/mcs-gitops/mcs-gitops", "ServiceMonitor/mcs-gitops/mcs-gitops", "Deployment/mcs-gitops/mcs-gitops"}},
		{"controller+inventory", inventoryOverlay, []string{"ConfigMap/mcs-gitops/mcs-gitops-access-providers", "Role/mcs-gitops/mcs-gitops-inventory",
			"RoleBinding/mcs-gitops/mcs-gitops-inventory", "Deployment/mcs-gitops/mcs-gitops"}},
		{"cronjob+inventory", inventoryCronJobOverlay, []string{"ConfigMap/mcs-gitops/mcs-gitops-access-providers", "CronJob/mcs-gitops/mcs-gitops-sync"}},
		{"member-rbac", "member-rbac", []string{"ClusterRole//mcs-gitops-member", "ClusterRoleBinding//mcs-gitops-member", "Role/kube-system/mcs-gitops-corefile-reader"}},
		{"member-rbac/coredns", "member-rbac/coredns", []string{"ClusterRole//mcs-gitops-coredns", "ClusterRoleBinding//mcs-gitops-coredns"}},
		{"member-rbac/admission-policy", "member-rbac/admission-policy", []string{"ValidatingAdmissionPolicy//mcs-gitops-member", "ValidatingAdmissionPolicyBinding//mcs-gitops-member"}},
		{"member-rbac/create-namespaces", "member-rbac/create-namespaces", []string{"ClusterRole//mcs-gitops-member-create-namespaces", "ClusterRoleBinding//mcs-gitops-member-create-namespaces"}},
	} {
		objs := build(t, filepath.Join(root, k.dir))
		built[k.name] = objs
		t.Run(k.name, func(t *testing.T) {
			var names []string
			for _, u := range objs {
				names = append(names, u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName())
			}
			for _, want := range k.kinds {
				assert.True(t, slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, want) }), "%s: no %s in %v", k.dir, want, names)
			}
			require.NoError(t, envtest.ServerSideApply(ctx, c.Client, objs, true))
		})
	}
	_, err = v1alpha1.LoadFile(filepath.Join(root, "base", "clusterset.yaml"))
	require.NoError(t, err, "the example config in deploy/base loads")

	deployment := &appsv1.Deployment{}
	fromUnstructured(t, find(t, built["controller"], "Deployment", "mcs-gitops", "mcs-gitops"), deployment)
	cronjob := &batchv1.CronJob{}
	fromUnstructured(t, find(t, built["cronjob"], "CronJob", "mcs-gitops", "mcs-gitops-sync"), cronjob)

	t.Run("pods pass Pod Security restricted", func(t *testing.T) {
		assertRestrictedAdmits(t, c, "mcs-gitops", map[string]corev1.PodTemplateSpec{
			"deploy/controller": deployment.Spec.Template,
			"deploy/cronjob":    cronjob.Spec.JobTemplate.Spec.Template,
		})
	})

	t.Run("the Role reads only the Secrets the config names", func(t *testing.T) {
		checkSecretAccess(t, c, root, built["controller"])
	})

	t.Run("selectors and ports match", func(t *testing.T) {
		checkWiring(t, built, deployment, cronjob)
	})

	t.Run("the inventory component's provider file loads where it is mounted", func(t *testing.T) {
		cm := find(t, built["controller+inventory"], "ConfigMap", "mcs-gitops", "mcs-gitops-access-providers")
		data, _, _ := unstructured.NestedString(cm.Object, "data", "providers.json")
		pf, err := inventory.ParseProviders("providers.json", []byte(data))
		require.NoError(t, err)
		require.Len(t, pf.Providers, 1)
		assert.Equal(t, join.ProfileProvider, pf.Providers[0].Name, "what member join --cluster-profile registers")
		for name, objs := range map[string][]*unstructured.Unstructured{"controller+inventory": built["controller+inventory"], "cronjob+inventory": built["cronjob+inventory"]} {
			var mounts []string
			for _, u := range objs {
				if u.GetKind() != "Deployment" && u.GetKind() != "CronJob" {
					continue
				}
				b, err := json.Marshal(u.Object)
				require.NoError(t, err)
				mounts = append(mounts, string(b))
			}
			require.Len(t, mounts, 1, name)
			assert.Contains(t, mounts[0], `"mountPath":"/etc/mcs-gitops/access"`, name)
			assert.Contains(t, mounts[0], `"name":"mcs-gitops-access-providers"`, name)
		}
	})
}

// assertRestrictedAdmits creates (dry run) a Pod of each template in ns,
// which must enforce Pod Security restricted: Pod Security admission only
// warns about a Deployment or a CronJob and refuses their Pods, so a Pod
// of each template is the proof. A privileged Pod must be refused first,
// or the namespace enforces nothing and the rest proves nothing.
func assertRestrictedAdmits(t *testing.T, c *envtest.Cluster, ns string, templates map[string]corev1.PodTemplateSpec) {
	t.Helper()
	ctx := context.Background()
	pod := func(name string, spec corev1.PodTemplateSpec) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: spec.Labels}, Spec: *spec.Spec.DeepCopy()}
	}
	i := 0
	for what, spec := range templates {
		if i == 0 {
			privileged := pod("privileged", spec)
			privileged.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = new(true)
			err := c.Client.Create(ctx, privileged, client.DryRunAll)
			require.Error(t, err, "the namespace must enforce Pod Security, or the checks below prove nothing")
			assert.Contains(t, err.Error(), `violates PodSecurity "restricted:`)
		}
		i++
		assert.NoError(t, c.Client.Create(ctx, pod(fmt.Sprintf("pod-%d", i), spec), client.DryRunAll), "%s's pod", what)
	}
}

// checkSecretAccess grants the base RBAC for real and reads Secrets as
// the ServiceAccount: those the example ClusterSet names can be read and
// watched by name, any other cannot, nor can the namespace's Secrets be
// listed or watched.
func checkSecretAccess(t *testing.T, c *envtest.Cluster, root string, objs []*unstructured.Unstructured) {
	ctx := context.Background()
	role := &rbacv1.Role{}
	fromUnstructured(t, find(t, objs, "Role", "mcs-gitops", "mcs-gitops"), role)
	var secretRules []rbacv1.PolicyRule
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "secrets") {
			secretRules = append(secretRules, r)
		}
	}
	require.Len(t, secretRules, 1, "one rule for Secrets")
	assert.NotEmpty(t, secretRules[0].ResourceNames, "Secret access limited by resourceNames")

	cfg, err := v1alpha1.LoadFile(filepath.Join(root, "base", "clusterset.yaml"))
	require.NoError(t, err)
	var named []string
	for _, m := range cfg.Spec.Members {
		if m.Kubeconfig.SecretRef != nil {
			named = append(named, m.Kubeconfig.SecretRef.Name)
		}
	}
	for _, cs := range []*v1alpha1.CredentialSource{cfg.Spec.Git.Auth.Token, cfg.Spec.Git.Auth.SSHKey, cfg.Spec.Git.Auth.KnownHosts} {
		if cs != nil && cs.SecretRef != nil {
			named = append(named, cs.SecretRef.Name)
		}
	}
	require.NotEmpty(t, named)

	var grant []*unstructured.Unstructured
	for _, u := range objs {
		if k := u.GetKind(); k == "Role" || k == "RoleBinding" || k == "ServiceAccount" {
			grant = append(grant, u)
		}
	}
	require.NoError(t, envtest.ServerSideApply(ctx, c.Client, grant, false))
	for _, name := range append(slices.Clone(named), "someone-elses") {
		require.NoError(t, c.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "mcs-gitops", Name: name},
			Data: map[string][]byte{"value": []byte("x")}}))
	}
	kubeconfig := filepath.Join(t.TempDir(), "mcs-gitops.kubeconfig")
	require.NoError(t, c.WriteKubeconfigAs(kubeconfig, "system:serviceaccount:mcs-gitops:mcs-gitops",
		"system:serviceaccounts", "system:serviceaccounts:mcs-gitops", "system:authenticated"))
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	sa, err := client.NewWithWatch(rc, client.Options{Scheme: envtest.Scheme()})
	require.NoError(t, err)

	for _, name := range named {
		assert.NoError(t, sa.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: name}, &corev1.Secret{}), "get %s", name)
		w, err := sa.Watch(ctx, &corev1.SecretList{}, client.InNamespace("mcs-gitops"), client.MatchingFields{"metadata.name": name})
		if assert.NoError(t, err, "watch %s by name", name) {
			w.Stop()
		}
	}
	err = sa.Get(ctx, client.ObjectKey{Namespace: "mcs-gitops", Name: "someone-elses"}, &corev1.Secret{})
	assert.True(t, apierrors.IsForbidden(err), "a Secret the config does not name: %v", err)
	err = sa.List(ctx, &corev1.SecretList{}, client.InNamespace("mcs-gitops"))
	assert.True(t, apierrors.IsForbidden(err), "listing Secrets: %v", err)
	_, err = sa.Watch(ctx, &corev1.SecretList{}, client.InNamespace("mcs-gitops"))
	assert.True(t, apierrors.IsForbidden(err), "watching every Secret: %v", err)

	// The lineage record, kept as the ServiceAccount: created, updated,
	// read back, an Event on it; no other ConfigMap can be read.
	store := &lineage.ConfigMap{Client: sa, Namespace: "mcs-gitops", Name: "mcs-gitops-lineage"}
	for _, commit := range []string{strings.Repeat("1", 40), strings.Repeat("2", 40)} {
		require.NoError(t, store.Save(ctx, &lineage.Record{Repository: "r", Branch: "main", Commit: commit}))
	}
	rec, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("2", 40), rec.Commit)
	require.NoError(t, store.Event(ctx, "BranchRefused", "Refuse", "a test", time.Now()))
	_, err = (&lineage.ConfigMap{Client: sa, Namespace: "mcs-gitops", Name: "someone-elses"}).Load(ctx)
	assert.True(t, apierrors.IsForbidden(err), "another ConfigMap: %v", err)
}

// checkWiring: the objects that refer to the pods by label or to a port
// by name or number find them, so that the NetworkPolicy covers both
// workloads, the PodDisruptionBudget and the metrics Service pick the
// controller's pods, and the ServiceMonitor finds the Service.
func checkWiring(t *testing.T, built map[string][]*unstructured.Unstructured, deployment *appsv1.Deployment, cronjob *batchv1.CronJob) {
	controllerPods := labels.Set(deployment.Spec.Template.Labels)
	cronjobPods := labels.Set(cronjob.Spec.JobTemplate.Spec.Template.Labels)
	selects := func(t *testing.T, sel *metav1.LabelSelector, pods labels.Set) bool {
		s, err := metav1.LabelSelectorAsSelector(sel)
		require.NoError(t, err)
		return !s.Empty() && s.Matches(pods)
	}
	var metricsPort *corev1.ContainerPort
	for i, p := range deployment.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == "metrics" {
			metricsPort = &deployment.Spec.Template.Spec.Containers[0].Ports[i]
		}
	}
	require.NotNil(t, metricsPort, "the controller's container has a port named metrics")

	for _, dir := range []string{"controller", "cronjob"} {
		np := &networkingv1.NetworkPolicy{}
		fromUnstructured(t, find(t, built[dir], "NetworkPolicy", "mcs-gitops", "mcs-gitops"), np)
		assert.True(t, selects(t, &np.Spec.PodSelector, controllerPods), "%s: the NetworkPolicy selects the controller's pods", dir)
		assert.True(t, selects(t, &np.Spec.PodSelector, cronjobPods), "%s: the NetworkPolicy selects the CronJob's pods", dir)
		assert.ElementsMatch(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, np.Spec.PolicyTypes)
		require.Len(t, np.Spec.Ingress, 1)
		require.Len(t, np.Spec.Ingress[0].Ports, 1)
		assert.Equal(t, intstr.FromInt32(metricsPort.ContainerPort), *np.Spec.Ingress[0].Ports[0].Port, "%s: ingress only to the metrics port", dir)
	}

	pdb := &policyv1.PodDisruptionBudget{}
	fromUnstructured(t, find(t, built["controller"], "PodDisruptionBudget", "mcs-gitops", "mcs-gitops"), pdb)
	assert.True(t, selects(t, pdb.Spec.Selector, controllerPods), "the PodDisruptionBudget selects the controller's pods")
	assert.False(t, selects(t, pdb.Spec.Selector, cronjobPods), "and not the CronJob's")
	require.NotNil(t, pdb.Spec.MaxUnavailable)
	assert.Less(t, pdb.Spec.MaxUnavailable.IntValue(), int(*deployment.Spec.Replicas), "a drain never takes every replica")

	svc := &corev1.Service{}
	fromUnstructured(t, find(t, built["controller"], "Service", "mcs-gitops", "mcs-gitops-metrics"), svc)
	assert.True(t, selects(t, metav1.SetAsLabelSelector(svc.Spec.Selector), controllerPods), "the metrics Service selects the controller's pods")
	require.Len(t, svc.Spec.Ports, 1)
	assert.Equal(t, "metrics", svc.Spec.Ports[0].Name)
	assert.Equal(t, metricsPort.ContainerPort, svc.Spec.Ports[0].Port)
	assert.Equal(t, intstr.FromString(metricsPort.Name), svc.Spec.Ports[0].TargetPort)

	sm := find(t, built["controller+servicemonitor"], "ServiceMonitor", "mcs-gitops", "mcs-gitops")
	smSelector := &metav1.LabelSelector{}
	sel, _, err := unstructured.NestedMap(sm.Object, "spec", "selector")
	require.NoError(t, err)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(sel, smSelector))
	assert.True(t, selects(t, smSelector, labels.Set(svc.Labels)), "the ServiceMonitor selects the metrics Service")
	endpoints, _, err := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	require.NoError(t, err)
	require.Len(t, endpoints, 1)
	assert.Equal(t, svc.Spec.Ports[0].Name, endpoints[0].(map[string]any)["port"], "the ServiceMonitor scrapes the Service's port by its name")
}

// build runs kustomize on dir, as `kubectl apply -k` would.
func build(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err, dir)
	var objs []*unstructured.Unstructured
	for _, r := range res.Resources() {
		m, err := r.Map()
		require.NoError(t, err)
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind && u.GetNamespace() == ns && u.GetName() == name {
			return u
		}
	}
	t.Fatalf("no %s %s/%s", kind, ns, name)
	return nil
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into))
}

// installCRDFile creates the CustomResourceDefinition of a YAML file and
// waits until its kinds are served.
func installCRDFile(t *testing.T, c *envtest.Cluster, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	crd := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(data, &crd.Object))
	require.NoError(t, envtest.ServerSideApply(context.Background(), c.Client, []*unstructured.Unstructured{crd}, false))
	eventually(t, 30*time.Second, func() bool {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(crd.GroupVersionKind())
		if c.Client.Get(context.Background(), client.ObjectKey{Name: crd.GetName()}, got) != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, cond := range conds {
			if m := cond.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true
			}
		}
		return false
	}, "CRD %s not established", crd.GetName())
}
