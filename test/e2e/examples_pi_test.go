//go:build e2e

package e2e

import (
	"testing"

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
