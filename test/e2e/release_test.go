//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/version"
)

// releaseImage is the operator image a release names.
var releaseImage = version.Image + ":" + version.Version

// TestReleaseManifestRunsUpstreamPi installs the operator as the README
// tells a stranger to: `kubectl apply --server-side -f install.yaml`, the
// file make release wrote to dist/, unchanged, its image pulled by the
// release's name through the cluster's ghcr.io mirror. Upstream's pi.yaml
// then succeeds with its ranks on two workers. The chart's release that
// hack/cluster/up.sh installed is taken away first and put back after.
func TestReleaseManifestRunsUpstreamPi(t *testing.T) {
	manifest, err := filepath.Abs("../../dist/install.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(manifest); err != nil {
		t.Fatalf("no release to install (make release writes dist/; hack/cluster/up.sh runs it): %v", err)
	}
	run(t, helmBinary(t), "uninstall", "mpi-operator", "-n", operatorNamespace, "--wait")
	objects := withoutKinds(t, manifest, "Namespace", "CustomResourceDefinition")
	t.Cleanup(func() {
		// What install.yaml made goes before the chart comes back: fields
		// kubectl's apply owns (the CPU request the local values drop)
		// would outlive Helm's apply. The Namespace and the CRD (and so
		// every MPIJob) stay.
		run(t, kubectlBinary(t), "delete", "--wait", "-f", objects)
		reinstallChart(t)
	})
	run(t, kubectlBinary(t), "apply", "--server-side", "-f", manifest)
	// The local cluster's two nodes have 2 CPUs each and pi.yaml asks 3 x 1
	// CPU: with a replica's 100m on each node, no node has room for two of
	// its Pods. One replica is what a two-node cluster of this size runs.
	run(t, kubectlBinary(t), "-n", operatorNamespace, "scale", "deployment/mpi-operator", "--replicas=1")
	key := client.ObjectKey{Namespace: operatorNamespace, Name: operatorName}
	waitRolledOut(t, key)

	d := &appsv1.Deployment{}
	if err := k8s.Get(context.Background(), key, d); err != nil {
		t.Fatal(err)
	}
	if _, helm := d.Labels["helm.sh/chart"]; helm {
		t.Fatalf("the Deployment has Helm's labels %v: not the one install.yaml made", d.Labels)
	}
	expectReleaseImage(t, d)

	job := createRaw(t, newNamespace(t), upstreamFile(t, "examples/v2beta1/pi/pi.yaml"), "application/yaml")
	got := waitFinished(t, job)
	out := launcherLogs(t, job)
	if !isTrue(got, kubeflow.JobSucceeded) {
		t.Fatalf("pi did not succeed: %+v\nlauncher output:\n%s", condition(got, kubeflow.JobFailed), out)
	}
	if hosts := piRanks(t, out); hosts[0] == hosts[1] {
		t.Errorf("both ranks ran on %s", hosts[0])
	}
	t.Logf("launcher output:\n%s", out)
}

// expectReleaseImage checks that the Deployment's Pods run the release's
// image, pulled by its name from ghcr.io (the cluster's mirror of it:
// nothing else serves it).
func expectReleaseImage(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	if got := d.Spec.Template.Spec.Containers[0].Image; got != releaseImage {
		t.Errorf("the Deployment runs %s, want the release's %s", got, releaseImage)
	}
	pods := &corev1.PodList{}
	if err := k8s.List(context.Background(), pods, client.InNamespace(d.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue // a replica scaled away
		}
		for _, cs := range p.Status.ContainerStatuses {
			if !strings.HasPrefix(cs.ImageID, version.Image+"@sha256:") {
				t.Errorf("Pod %s runs %s with ID %q, want one pulled as %s", p.Name, cs.Image, cs.ImageID, version.Image)
			}
			t.Logf("operator Pod %s on %s runs %s (%s)", p.Name, p.Spec.NodeName, cs.Image, cs.ImageID)
		}
	}
}

// reinstallChart puts back the release of the packaged chart, as
// hack/cluster/steps.sh installed it; Helm takes over what install.yaml
// made (hack/deploy.sh passes --take-ownership).
func reinstallChart(t *testing.T) {
	t.Helper()
	charts, _ := filepath.Glob("../../dist/mpi-operator-*.tgz")
	if len(charts) != 1 {
		t.Fatalf("want one packaged chart in dist/, got %v", charts)
	}
	chart, _ := filepath.Abs(charts[0])
	cmd := exec.Command("../../hack/deploy.sh", "install")
	cmd.Env = append(os.Environ(), "HELM="+helmBinary(t), "KUBECTL="+kubectlBinary(t), "CHART="+chart,
		"HELM_ARGS=-f ../../hack/cluster/operator-values.yaml")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reinstalling the chart: %v\n%s", err, out)
	}
	waitRolledOut(t, client.ObjectKey{Namespace: operatorNamespace, Name: operatorName})
	if raceImage != "" {
		// The rest of the suite runs the -race operator again.
		if err := setOperatorImage(context.Background(), raceImage); err != nil {
			t.Fatal(err)
		}
	}
}

// withReleaseImage makes the operator run the release's image for the
// test, when the suite runs the -race one (raceImage).
func withReleaseImage(t *testing.T) {
	t.Helper()
	if raceImage == "" {
		return
	}
	if err := setOperatorImage(context.Background(), releaseImage); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := setOperatorImage(context.Background(), raceImage); err != nil {
			t.Error(err)
		}
	})
}

// run runs a command and fails the test with its output if it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kubectlBinary is the local cluster's kubectl, beside its kubeconfig.
func kubectlBinary(t *testing.T) string {
	t.Helper()
	return filepath.Join(filepath.Dir(os.Getenv("KUBECONFIG")), "bin", "kubectl")
}

// helmBinary is the helm the local cluster installs with.
func helmBinary(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("../../hack/build-helm.sh").Output()
	if err != nil {
		t.Fatalf("hack/build-helm.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// withoutKinds writes the manifest's documents but those of the given
// kinds to a file of the test's, and returns its path.
func withoutKinds(t *testing.T, manifest string, kinds ...string) string {
	t.Helper()
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Kind != "" && !slices.Contains(kinds, meta.Kind) {
			kept = append(kept, doc)
		}
	}
	out := filepath.Join(t.TempDir(), "install-objects.yaml")
	if err := os.WriteFile(out, []byte(strings.Join(kept, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}
