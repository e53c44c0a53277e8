//go:build e2e

package e2e

import (
	"context"
	"os"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// TestChartInstalledOperatorRunsPi: hack/cluster/up.sh installs the
// operator as a Helm release of the packaged chart make release wrote to
// dist/ (hack/deploy.sh with hack/cluster/operator-values.yaml), its image
// pulled by the release's name, and its leader runs the pi example
// that make demo runs, its ranks on the two workers.
func TestChartInstalledOperatorRunsPi(t *testing.T) {
	ctx := context.Background()
	withReleaseImage(t)
	raw, err := os.ReadFile("../../charts/mpi-operator/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var chart struct{ Name, Version string }
	if err := yaml.Unmarshal(raw, &chart); err != nil {
		t.Fatal(err)
	}
	wantChart := chart.Name + "-" + chart.Version

	d := &appsv1.Deployment{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: operatorName}, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Labels["helm.sh/chart"]; got != wantChart {
		t.Fatalf("the operator's Deployment has helm.sh/chart %q, want %q: not installed from the release's chart", got, wantChart)
	}
	expectReleaseImage(t, d)
	// A release Secret: helm installed it, rather than kubectl applying
	// helm template's output.
	secrets := &corev1.SecretList{}
	if err := k8s.List(ctx, secrets, client.InNamespace(operatorNamespace),
		client.MatchingLabels{"owner": "helm", "name": "mpi-operator", "status": "deployed"}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 1 {
		t.Errorf("%d deployed Helm releases named mpi-operator, want 1", len(secrets.Items))
	}
	replicas := readyOperatorPods(t)
	leader := leaderPod(t, func(holder string) bool { return replicas[holder] })
	pod := &corev1.Pod{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: leader}, pod); err != nil {
		t.Fatal(err)
	}
	if got := pod.Labels["helm.sh/chart"]; got != wantChart {
		t.Errorf("the leader %s has helm.sh/chart %q, want %q", leader, got, wantChart)
	}
	t.Logf("leader %s of the release's Deployment (%s, image %s)", leader, wantChart, pod.Spec.Containers[0].Image)

	doc, err := os.ReadFile("../../examples/v2beta1/pi/pi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	job := createRaw(t, newNamespace(t), doc, "application/yaml")
	got := waitFinished(t, job)
	out := launcherLogs(t, job)
	if !isTrue(got, kubeflow.JobSucceeded) {
		t.Fatalf("pi did not succeed: %+v\nlauncher output:\n%s", condition(got, kubeflow.JobFailed), out)
	}
	t.Logf("launcher output:\n%s", out)
	hosts := piRanks(t, out)
	if got := []string{hosts[0], hosts[1]}; !slices.Contains(got, "pi-worker-0") || !slices.Contains(got, "pi-worker-1") {
		t.Errorf("ranks ran on %v, want one on each of pi-worker-0 and pi-worker-1", got)
	}
}
