package controller

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// oomKilled plays the kubelet: the worker's container ran out of memory
// at, and its Pod (restartPolicy Never under ExitCode) failed.
func oomKilled(at time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		t := exited(137, at)
		t.Reason = "OOMKilled"
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{Terminated: t}}}
	}
}

// A worker that runs out of memory under ExitCode restarts the job, and
// each time spends a retry of backoffLimit: with backoffLimit 1 the job
// fails at the second, after 2 attempts, naming the worker, its exit code
// and OOMKilled. It restarted for ever before, as a retryable exit cost
// nothing.
func TestWorkersOwnFailureSpendsARetry(t *testing.T) {
	f, job, start := running(t, testjob.MakeMPIJob("pi", "ns").Workers(2).BackoffLimit(1).
		WorkerRestartPolicy(kubeflow.RestartPolicyExitCode).Obj())
	f.updatePod(t, "pi-worker-1", oomKilled(start.Add(30*time.Second)))
	f.reconcile(t, job) // records the restart
	rec, ok := restartOf(f.job(t, job))
	if !ok || rec.BackoffLimit != 0 {
		t.Fatalf("restart record %+v (recorded %t), want one with backoffLimit 0: the failure spent the one retry", rec, ok)
	}
	// kubectl mpi reads which worker failed, and how, from the record.
	oom := jobrecord.PodFailure{Pod: "pi-worker-1", Role: "worker", Container: "worker", ExitCode: ptr.To[int32](137), Reason: "OOMKilled"}
	if rec.Lost == nil || !reflect.DeepEqual(*rec.Lost, oom) {
		t.Errorf("restart record's lost worker %+v, want %+v", rec.Lost, oom)
	}
	f.reconcile(t, job) // carries it out: a new launcher Job, the worker replaced
	l := f.launcher(t)
	if got := ptr.Deref(l.Spec.BackoffLimit, -1); got != 0 {
		t.Fatalf("second attempt's launcher Job has backoffLimit %d, want 0", got)
	}

	// The second attempt: its worker runs out of memory too.
	f.r.Expectations.DeletionObserved("ns/pi", "pi-worker-1")
	f.reconcile(t, job) // makes the worker again
	f.r.Expectations.CreationObserved("ns/pi", "pi-worker-1")
	f.updatePod(t, "pi-worker-1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning })
	second := start.Add(2 * time.Minute)
	f.startLauncher(t, "pi-launcher-1-fghij", second)
	f.clock.SetTime(second.Add(10 * time.Second))
	f.reconcile(t, job)
	f.updatePod(t, "pi-worker-1", oomKilled(second.Add(30*time.Second)))
	f.clock.SetTime(second.Add(time.Minute))
	f.reconcile(t, job)

	got := f.job(t, job)
	c := getCondition(&got.Status, kubeflow.JobFailed)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonBackoffLimitExceeded {
		t.Fatalf("Failed condition %+v, want True with reason %s (conditions %+v)", c, ReasonBackoffLimitExceeded, got.Status.Conditions)
	}
	for _, want := range []string{"pi-worker-1", "code 137", "OOMKilled"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q does not name %q", c.Message, want)
		}
	}
	if fail, ok := jobrecord.FailureOf(got); !ok || !reflect.DeepEqual(fail, oom) {
		t.Errorf("failure record %+v (recorded %t), want %+v", fail, ok, oom)
	}
	if rec, _ := restartOf(got); rec.Count != 1 {
		t.Errorf("%d restarts, want 1: backoffLimit 1 gives 2 attempts", rec.Count)
	}
}

// An evicted worker restarts the job for free, under ExitCode too.
func TestEvictedWorkerRestartsForFree(t *testing.T) {
	f, job, start := running(t, testjob.MakeMPIJob("pi", "ns").Workers(2).BackoffLimit(1).
		WorkerRestartPolicy(kubeflow.RestartPolicyExitCode).Obj())
	f.updatePod(t, "pi-worker-1", func(p *corev1.Pod) {
		oomKilled(start.Add(30 * time.Second))(p)
		disrupt(start.Add(29 * time.Second))(p)
	})
	f.reconcile(t, job)
	if rec, ok := restartOf(f.job(t, job)); !ok || rec.BackoffLimit != 1 {
		t.Fatalf("restart record %+v (recorded %t), want backoffLimit 1 kept", rec, ok)
	}
}
