package controller

import (
	"testing"
	"time"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Found by make chaos (test/chaos, docs/chaos.md): a worker Pod that is
// gone before any reconcile saw it stopping is replaced, and the running
// launcher keeps its attempt, now short of a rank. The Pod vanishes unseen
// when it is force-deleted, when its kubelet stops it within the informer's
// batching, or when it goes while no operator leads (a failover takes the
// Lease's 15 s; an sshd worker stops in about one). Design §4.3 says a
// worker lost while mpirun may use it restarts the job; here the hostfile
// still lists the worker and the launcher started before it went, which is
// all the evidence the API keeps. This test fails until the controller
// also treats a listed worker index that has no Pod, while the launcher
// runs, as a disruption.
func TestWorkerGoneUnseenWhileLauncherRunsRestartsTheJob(t *testing.T) {
	f, job, start := runningJob(t, 0)
	old := f.launcher(t)
	f.clock.SetTime(start.Add(90 * time.Second))
	f.deletePod(t, "pi-worker-1")
	f.reconcile(t, job)
	f.reconcile(t, job)

	got, l := f.job(t, job), f.launcher(t)
	if l.UID == old.UID {
		t.Errorf("launcher Job not replaced: the running attempt keeps going without worker 1 (conditions %+v)", got.Status.Conditions)
	}
	if _, ok := got.Annotations[AnnotationRestart]; !ok {
		t.Errorf("no restart recorded on the MPIJob")
	}
	if isTrue(&got.Status, kubeflow.JobFailed) {
		t.Errorf("job Failed: %+v", got.Status.Conditions)
	}
}
