package controller

import (
	"testing"
	"time"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// Found by make chaos (test/chaos, docs/records/chaos.md): a worker Pod that is
// gone before any reconcile saw it stopping is replaced, and the running
// launcher keeps its attempt, now short of a rank. The Pod vanishes unseen
// when it is force-deleted, when its kubelet stops it within the informer's
// batching, or when it goes while no operator leads (a failover takes the
// Lease's 15 s; an sshd worker stops in about one). Design §4.3 says a
// worker lost while mpirun may use it restarts the job; here the hostfile
// still lists the worker and the launcher started before it went, which is
// all the evidence the API keeps. It failed until the controller also
// treated a worker that discover_hosts.sh lists as running and that has
// no Pod, while the launcher runs, as a disruption.
func TestWorkerGoneUnseenWhileLauncherRunsRestartsTheJob(t *testing.T) {
	f, job, start := runningJob(t, 0)
	old := f.launcher(t)
	// discover_hosts.sh lists the running workers once its pacing allows.
	f.clock.SetTime(start.Add(62 * time.Second))
	f.reconcile(t, job)
	if hosts := builder.DiscoveredHosts(f.configMap(t).Data[builder.DiscoverHostsKey]); len(hosts) != 2 {
		t.Fatalf("discover_hosts.sh lists %q", hosts)
	}
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

// The worker goes before discover_hosts.sh ever listed it running (its
// writes are paced, and no operator may lead then): that the launcher's
// own container ran shows every worker of the attempt had a Pod.
func TestWorkerGoneBeforeDiscoverHostsListedItRestartsTheJob(t *testing.T) {
	f, job, start := runningJob(t, 0)
	old := f.launcher(t)
	if hosts := builder.DiscoveredHosts(f.configMap(t).Data[builder.DiscoverHostsKey]); len(hosts) != 0 {
		t.Fatalf("discover_hosts.sh lists %q", hosts)
	}
	f.clock.SetTime(start.Add(90 * time.Second))
	f.deletePod(t, "pi-worker-1")
	f.reconcile(t, job)
	f.reconcile(t, job)
	if l := f.launcher(t); l.UID == old.UID {
		t.Error("launcher Job not replaced")
	}
}
