package controller

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// runningJob is a job of two workers whose launcher Job (backoffLimit
// limit) started at the fixture's clock and whose launcher Pod runs.
func runningJob(t *testing.T, limit int32) (*fixture, *kubeflow.MPIJob, time.Time) {
	t.Helper()
	return running(t, testjob.MakeMPIJob("pi", "ns").Workers(2).BackoffLimit(limit).Obj())
}

// running is job (named pi, in ns, with two workers) made and Running:
// its launcher Job started at the fixture's clock and its Pod runs.
func running(t *testing.T, job *kubeflow.MPIJob) (*fixture, *kubeflow.MPIJob, time.Time) {
	t.Helper()
	return runningWith(t, job, interceptor.Funcs{})
}

// runningWith is running, with the fake client's calls passed through
// funcs.
func runningWith(t *testing.T, job *kubeflow.MPIJob, funcs interceptor.Funcs) (*fixture, *kubeflow.MPIJob, time.Time) {
	t.Helper()
	f := newFixture(t, funcs, job)
	f.reconcile(t, job)
	start := f.clock.Now()
	for i := range 2 {
		f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, i))
		f.updatePod(t, builder.WorkerName(job, i), func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning })
	}
	f.startLauncher(t, "pi-launcher-abcde", start)
	f.clock.SetTime(start.Add(time.Minute))
	f.reconcile(t, job)
	if got := f.job(t, job); !isTrue(&got.Status, kubeflow.JobRunning) {
		t.Fatalf("job not Running: %+v", got.Status.Conditions)
	}
	f.drainEvents()
	f.writes = calls{}
	return f, job, start
}

// startLauncher plays the Job controller and the kubelet: the launcher
// Job has a running Pod of the given name, and started at start.
func (f *fixture) startLauncher(t *testing.T, name string, start time.Time) {
	t.Helper()
	l := f.launcher(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(start),
		Labels:          l.Spec.Template.Labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(l, batchv1.SchemeGroupVersion.WithKind("Job"))},
	}}
	if err := f.client.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	f.updatePod(t, name, func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning })
	f.updateLauncher(t, func(l *batchv1.Job) {
		l.Status.StartTime = ptr.To(metav1.NewTime(start))
		l.Status.Active = 1
	})
}

func (f *fixture) updatePod(t *testing.T, name string, mutate func(*corev1.Pod)) {
	t.Helper()
	p := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, p); err != nil {
		t.Fatal(err)
	}
	mutate(p)
	if err := f.client.Status().Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// deletePod removes a Pod at once, as the kubelet and garbage collector
// would in the end.
func (f *fixture) deletePod(t *testing.T, name string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if err := f.client.Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// launcher is the launcher Job of job pi's current attempt, named for the
// restarts its record counts.
func (f *fixture) launcher(t *testing.T) *batchv1.Job {
	t.Helper()
	job := &kubeflow.MPIJob{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi"}, job); err != nil {
		t.Fatal(err)
	}
	rec, _ := restartOf(job)
	l := &batchv1.Job{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: builder.LauncherJobName(job, rec.Count)}, l); err != nil {
		t.Fatal(err)
	}
	return l
}

func (f *fixture) updateLauncher(t *testing.T, mutate func(*batchv1.Job)) {
	t.Helper()
	l := f.launcher(t)
	mutate(l)
	if err := f.client.Status().Update(context.Background(), l); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) job(t *testing.T, job *kubeflow.MPIJob) *kubeflow.MPIJob {
	t.Helper()
	got := &kubeflow.MPIJob{}
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func disrupt(at time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "PreemptionByScheduler", LastTransitionTime: metav1.NewTime(at),
		})
	}
}

func exited(code int32, at time.Time) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(at)}
}

// failLauncher plays the kubelet and the Job controller: the launcher
// Pod's container exited with code at exitAt after restarts restarts, and
// the launcher Job failed for good a second later with failed Pods failed.
func (f *fixture) failLauncher(t *testing.T, code, restarts, failed int32, exitAt time.Time) {
	t.Helper()
	f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "launcher", RestartCount: restarts,
			State: corev1.ContainerState{Terminated: exited(code, exitAt)}}}
	})
	f.updateLauncher(t, func(l *batchv1.Job) {
		now := metav1.NewTime(exitAt.Add(time.Second))
		l.Status.Active, l.Status.Failed = 0, failed
		l.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now},
		}
	})
}
