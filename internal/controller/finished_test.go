package controller

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// completeLauncher plays the Job controller and the kubelet: the launcher
// Pod exited 0 and the launcher Job completed at end.
func (f *fixture) completeLauncher(t *testing.T, end time.Time) {
	t.Helper()
	f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	f.updateLauncher(t, func(l *batchv1.Job) {
		l.Status.Active, l.Status.Succeeded = 0, 1
		l.Status.CompletionTime = ptr.To(metav1.NewTime(end))
		l.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
		}
	})
}

func activeCounts(job *kubeflow.MPIJob) map[kubeflow.MPIReplicaType]int32 {
	out := map[kubeflow.MPIReplicaType]int32{}
	for rt, rs := range job.Status.ReplicaStatuses {
		out[rt] = rs.Active
	}
	return out
}

// A finished job reports as active only the Pods that still run: `kubectl
// get mpijob` showed RUNNING 2 on a Succeeded job whose workers it had
// just deleted (issue 11). Upstream reports 0 once it deletes them.
func TestFinishedJobReportsOnlyPodsThatStillRun(t *testing.T) {
	cases := map[string]struct {
		policy     kubeflow.CleanPodPolicy
		wantWorker int32
	}{
		"Running: the workers are deleted": {policy: kubeflow.CleanPodPolicyRunning, wantWorker: 0},
		"All: the workers are deleted":     {policy: kubeflow.CleanPodPolicyAll, wantWorker: 0},
		"None: the workers still run":      {policy: kubeflow.CleanPodPolicyNone, wantWorker: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, job, start := running(t, testjob.MakeMPIJob("pi", "ns").Workers(2).CleanPodPolicy(tc.policy).Obj())
			f.completeLauncher(t, start.Add(2*time.Minute))
			f.clock.SetTime(start.Add(3 * time.Minute))
			f.reconcile(t, job)

			// The write that records the outcome carries the counts.
			got := f.job(t, job)
			if !isTrue(&got.Status, kubeflow.JobSucceeded) || f.writes["status MPIJob"] != 1 {
				t.Fatalf("want one status write with Succeeded; writes %v, conditions %+v", f.writes, got.Status.Conditions)
			}
			want := map[kubeflow.MPIReplicaType]int32{kubeflow.MPIReplicaTypeLauncher: 0, kubeflow.MPIReplicaTypeWorker: tc.wantWorker}
			if a := activeCounts(got); a[kubeflow.MPIReplicaTypeLauncher] != 0 || a[kubeflow.MPIReplicaTypeWorker] != tc.wantWorker {
				t.Errorf("active counts of the finished job = %v, want %v", a, want)
			}
			if rs := got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeLauncher]; rs.Succeeded != 1 {
				t.Errorf("launcher succeeded = %d, want 1", rs.Succeeded)
			}
		})
	}
}

// A job that finished under an operator that left its deleted workers
// counted as active is corrected once its Pods are gone.
func TestFinishedJobWithStaleActiveCountsIsCorrected(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).CleanPodPolicy(kubeflow.CleanPodPolicyRunning).Obj()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job.Status = kubeflow.JobStatus{
		Conditions: []kubeflow.JobCondition{
			{Type: kubeflow.JobCreated, Status: corev1.ConditionTrue, Reason: ReasonCreated},
			{Type: kubeflow.JobSucceeded, Status: corev1.ConditionTrue, Reason: ReasonSucceeded},
		},
		StartTime:      ptr.To(metav1.NewTime(now.Add(-time.Hour))),
		CompletionTime: ptr.To(metav1.NewTime(now.Add(-time.Minute))),
		ReplicaStatuses: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaStatus{
			kubeflow.MPIReplicaTypeLauncher: {Succeeded: 1},
			kubeflow.MPIReplicaTypeWorker:   {Active: 2, Selector: "stale"},
		},
	}
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	// A count-only change waits for the pacer's period at most.
	f.clock.SetTime(now.Add(time.Minute))
	f.reconcile(t, job)
	got := f.job(t, job)
	if a := activeCounts(got); a[kubeflow.MPIReplicaTypeWorker] != 0 || a[kubeflow.MPIReplicaTypeLauncher] != 0 {
		t.Errorf("active counts = %v, want 0 for every replica type", a)
	}
	if rs := got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeLauncher]; rs.Succeeded != 1 {
		t.Errorf("launcher succeeded = %d, want the written 1 kept", rs.Succeeded)
	}
}
