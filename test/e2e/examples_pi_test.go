//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// TestExamplePi runs examples/v2beta1/pi: upstream's pi.yaml and
// pi-mpich.yaml and their root variants. Each job succeeds with its two
// ranks on two distinct workers, ssh checking host keys, its Pods on both
// nodes (3 CPUs do not fit on one), its image pulled by its public name.
func TestExamplePi(t *testing.T) {
	exampleTest(t)
	for _, file := range []string{"pi.yaml", "pi-mpich.yaml", "pi-root.yaml", "pi-mpich-root.yaml"} {
		t.Run(file, func(t *testing.T) {
			job := exampleJob(t, "pi/"+file)
			out := expectSucceeded(t, job)
			hosts := piRanks(t, out)
			for r, h := range hosts {
				if !workerHost.MatchString(h) {
					t.Errorf("rank %d ran on %q, not on a worker", r, h)
				}
			}
			if hosts[0] == hosts[1] {
				t.Errorf("both ranks ran on %s", hosts[0])
			}
			expectHostKeysChecked(t, job)
			expectPulledFromMirror(t, job)
			expectOnBothNodes(t, job)
		})
	}
}

// TestExampleHostNetwork runs examples/v2beta1/hostnetwork/pi.yaml: the
// launcher and its one worker on different nodes, in the nodes' network
// namespace, the launcher logged in to the worker's sshd (the ranks'
// host names, the machine's, cannot tell).
func TestExampleHostNetwork(t *testing.T) {
	exampleTest(t)
	job := exampleJob(t, "hostnetwork/pi.yaml")
	out := expectSucceeded(t, job)
	piRanks(t, out)
	for _, p := range append(launcherPods(t, job), workerPods(t, job)...) {
		if !p.Spec.HostNetwork {
			t.Errorf("Pod %s is not on the host's network", p.Name)
		}
	}
	expectSSHLogin(t, job)
	expectHostKeysChecked(t, job)
	expectPulledFromMirror(t, job)
	expectOnBothNodes(t, job)
}

// expectSucceeded waits for the job to finish, fails the test unless it
// Succeeded, and returns the launcher's output.
func expectSucceeded(t *testing.T, job *kubeflow.MPIJob) string {
	t.Helper()
	got := waitFinished(t, job)
	out := launcherLogs(t, job)
	if !isTrue(got, kubeflow.JobSucceeded) {
		t.Fatalf("job did not succeed: %+v\nlauncher output:\n%s", condition(got, kubeflow.JobFailed), out)
	}
	t.Logf("launcher output:\n%s", out)
	return out
}

// TestExamplesAreUpstreamsWithTheUpstreamTestsEdits: the root and
// hostNetwork examples are upstream's pi.yaml and pi-mpich.yaml with the
// edits asRoot and onHostNetwork make, read from upstream's module, so
// that what TestExamplePi and TestExampleHostNetwork run stays upstream's
// (the non-root examples are its files byte for byte, test/upstream).
func TestExamplesAreUpstreamsWithTheUpstreamTestsEdits(t *testing.T) {
	for _, tc := range []struct {
		example, upstream string
		edit              func(map[string]any)
	}{
		{"pi/pi-root.yaml", "pi.yaml", asRoot},
		{"pi/pi-mpich-root.yaml", "pi-mpich.yaml", asRoot},
		{"hostnetwork/pi.yaml", "pi.yaml", onHostNetwork},
	} {
		t.Run(tc.example, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(examplesDir, tc.example))
			if err != nil {
				t.Fatal(err)
			}
			ours := &kubeflow.MPIJob{}
			if err := yaml.UnmarshalStrict(raw, ours); err != nil {
				t.Fatal(err)
			}
			theirs := &kubeflow.MPIJob{}
			if err := json.Unmarshal(edited(t, upstreamFile(t, "examples/v2beta1/pi/"+tc.upstream), tc.edit), theirs); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(theirs, ours); diff != "" {
				t.Errorf("examples/v2beta1/%s is not upstream's %s as asRoot or onHostNetwork edits it (-upstream's edited +ours):\n%s", tc.example, tc.upstream, diff)
			}
		})
	}
}
