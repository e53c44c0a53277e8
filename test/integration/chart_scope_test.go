package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
	"github.com/mpi-operator/mpi-operator/test/internal/chartrender"
)

// chartScopeSuffix renames the chart's cluster-scoped RBAC objects, whose
// names the suite's own operator identity (config/rbac) already uses.
const chartScopeSuffix = "-chart-scope"

// TestChartNamespacedScopeRunsJobsInItsNamespaces runs the operator's
// binary as the chart installs it with `namespaces: [A]`: its arguments
// and its RBAC (Roles in A and in its own namespace, a ClusterRole for
// PriorityClasses alone), as the chart's ServiceAccount. A job in A runs
// to Succeeded with no request refused; a job in another namespace is
// never touched.
func TestChartNamespacedScopeRunsJobsInItsNamespaces(t *testing.T) {
	ctx := context.Background()
	served, other := newNamespace(t), newNamespace(t)
	release := "mpi-operator-chart"
	kubeconfig, chartArgs := chartIdentity(t, release, served)
	// Both jobs are held off the in-process controller, so that only the
	// binary can act on them.
	const hold = "reconciled-by-the-binary"
	for _, ns := range []string{served, other} {
		r.Expectations.ExpectCreations(ns+"/pi", hold)
		t.Cleanup(func() { r.Expectations.CreationObserved(ns+"/pi", hold) })
	}

	// In a Pod, the Lease's namespace is read from the ServiceAccount
	// mount and the ports are the Pod's own; here they are given.
	args := append(append([]string{}, chartArgs...), "--leader-election-namespace="+release,
		"--metrics-bind-address=0", "--health-probe-bind-address=0")
	op := startOperatorBinary(t, kubeconfig, args, nil)
	op.waitForLease(t, release)

	untouched := createJob(t, testjob.MakeMPIJob("pi", other).Workers(2).Obj())
	job := createJob(t, testjob.MakeMPIJob("pi", served).Workers(2).Obj())
	runWorkers(t, job, 2)
	startLauncher(t, job)
	waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionTrue)
	finishLauncher(t, job, true, "", "")
	waitCondition(t, job, kubeflow.JobSucceeded, corev1.ConditionTrue)

	got, err := getJob(ctx, untouched)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 0 {
		t.Errorf("the job in %s, a namespace the operator does not serve, has conditions %+v", other, got.Status.Conditions)
	}
	pods := &corev1.PodList{}
	if err := k8s.List(ctx, pods, client.InNamespace(other)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d Pods in %s, a namespace the operator does not serve", len(pods.Items), other)
	}
	for _, line := range strings.Split(op.logs.String(), "\n") {
		if strings.Contains(line, "forbidden") {
			t.Errorf("a request was refused: %s", line)
		}
	}
}

// chartIdentity installs the chart's RBAC for release with `namespaces:
// [served]` and returns a kubeconfig of its ServiceAccount and the
// operator arguments the chart renders.
func chartIdentity(t *testing.T, release, served string) (kubeconfig []byte, chartArgs []string) {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: release}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	objs, err := chartrender.Render("../../charts/mpi-operator", release, map[string]any{"namespaces": []any{served}})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		for _, u := range chartrender.OfKind(objs, kind) {
			createRBAC(t, u.DeepCopy())
		}
	}
	deployments := chartrender.OfKind(objs, "Deployment")
	if len(deployments) != 1 {
		t.Fatalf("the chart renders %d Deployments", len(deployments))
	}
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(deployments[0].Object, d); err != nil {
		t.Fatal(err)
	}
	chartArgs = d.Spec.Template.Spec.Containers[0].Args

	user, err := testEnv.ControlPlane.AddUser(envtest.User{
		Name:   "system:serviceaccount:" + release + ":mpi-operator",
		Groups: []string{"system:serviceaccounts"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err = user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig, chartArgs
}

// TestOperatorWithoutClusterAccessSaysSoAndExits runs the binary as the
// chart's namespaced identity but without --namespace: it would watch
// every namespace, which its Roles do not allow. Instead of waiting for
// a cache that never syncs, it exits, naming what it may not do.
func TestOperatorWithoutClusterAccessSaysSoAndExits(t *testing.T) {
	release := "mpi-operator-chart"
	kubeconfig, _ := chartIdentity(t, release, newNamespace(t))
	op := startOperatorBinary(t, kubeconfig, []string{"--leader-election-namespace=" + release,
		"--metrics-bind-address=0", "--health-probe-bind-address=0"}, nil)
	var err error
	select {
	case err = <-op.exited:
		op.exited <- err
	case <-time.After(envtestutil.Timeout):
		t.Fatalf("the binary still runs after %s", envtestutil.Timeout)
	}
	if err == nil {
		t.Errorf("the binary exited 0")
	}
	logs := op.logs.String()
	for _, want := range []string{"may not", "list pods at the cluster scope", "watch mpijobs.kubeflow.org at the cluster scope", "--namespace"} {
		if !strings.Contains(logs, want) {
			t.Errorf("its output does not say %q:\n%s", want, logs)
		}
	}
}

// createRBAC creates one of the chart's RBAC objects, its cluster-scoped
// ones renamed.
func createRBAC(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	switch u.GetKind() {
	case "ClusterRole":
		u.SetName(u.GetName() + chartScopeSuffix)
	case "ClusterRoleBinding":
		u.SetName(u.GetName() + chartScopeSuffix)
		name, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
		if err := unstructured.SetNestedField(u.Object, name+chartScopeSuffix, "roleRef", "name"); err != nil {
			t.Fatal(err)
		}
	}
	if err := k8s.Create(context.Background(), u); err != nil {
		t.Fatalf("creating the chart's %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), u) })
}
