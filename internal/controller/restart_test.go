package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	f := newFixture(t, interceptor.Funcs{}, job)
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

func TestDisruptedWorkerRestartsTheJobWithTheRetriesLeft(t *testing.T) {
	cases := []struct {
		name string
		// before is how the launcher stands when the worker is disrupted,
		// 30 s after the launcher started.
		before      func(f *fixture, start time.Time)
		wantRestart bool
		wantLimit   int32
	}{{
		name: "program failed once before the disruption: one retry used",
		before: func(f *fixture, start time.Time) {
			f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "launcher", RestartCount: 1,
					LastTerminationState: corev1.ContainerState{Terminated: exited(1, start.Add(10*time.Second))}}}
			})
		},
		wantRestart: true, wantLimit: 1,
	}, {
		name: "launcher failed because of the lost worker, past backoffLimit: not the program's failure",
		before: func(f *fixture, start time.Time) {
			f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodFailed
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "launcher", RestartCount: 2,
					State: corev1.ContainerState{Terminated: exited(137, start.Add(31*time.Second))}}}
			})
			f.updateLauncher(t, func(l *batchv1.Job) {
				now := metav1.NewTime(start.Add(32 * time.Second))
				l.Status.Active, l.Status.Failed = 0, 3
				l.Status.Conditions = []batchv1.JobCondition{
					{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now},
					{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now},
				}
			})
		},
		wantRestart: true, wantLimit: 0,
	}, {
		name: "launcher failed for good before the disruption: the outcome stands",
		before: func(f *fixture, start time.Time) {
			f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodFailed
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "launcher",
					State: corev1.ContainerState{Terminated: exited(1, start.Add(20*time.Second))}}}
			})
			f.updateLauncher(t, func(l *batchv1.Job) {
				now := metav1.NewTime(start.Add(20 * time.Second))
				l.Status.Active, l.Status.Failed = 0, 3
				l.Status.Conditions = []batchv1.JobCondition{
					{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now},
					{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now},
				}
			})
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, job, start := runningJob(t, 2)
			old := f.launcher(t)
			tc.before(f, start)
			f.updatePod(t, "pi-worker-1", disrupt(start.Add(30*time.Second)))
			// The first reconcile records the restart, the next carries
			// it out.
			f.reconcile(t, job)
			f.reconcile(t, job)

			got, l := f.job(t, job), f.launcher(t)
			if !tc.wantRestart {
				if l.UID != old.UID || isTrue(&got.Status, kubeflow.JobRestarting) || !isTrue(&got.Status, kubeflow.JobFailed) {
					t.Fatalf("restarted: launcher %s (was %s), conditions %+v", l.UID, old.UID, got.Status.Conditions)
				}
				return
			}
			if l.UID == old.UID {
				t.Fatal("launcher Job not replaced")
			}
			if ptr.Deref(l.Spec.BackoffLimit, -1) != tc.wantLimit {
				t.Errorf("new launcher backoffLimit %d, want %d", ptr.Deref(l.Spec.BackoffLimit, -1), tc.wantLimit)
			}
			c := getCondition(&got.Status, kubeflow.JobRestarting)
			if c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonRestarting || !strings.Contains(c.Message, "pi-worker-1") {
				t.Errorf("Restarting condition: %+v", c)
			}
			if isTrue(&got.Status, kubeflow.JobRunning) || isFinished(&got.Status) {
				t.Errorf("conditions after restart: %+v", got.Status.Conditions)
			}
			if ev := f.drainEvents(); len(ev) != 1 || !strings.Contains(ev[0], ReasonRestarting) {
				t.Errorf("events: %q", ev)
			}
			if f.writes["patch MPIJob"] != 1 || f.writes["delete Job"] != 1 || f.writes["create Job"] != 1 || f.writes["status MPIJob"] != 1 || f.writes["delete Pod"] > 1 {
				t.Errorf("writes: %v", f.writes)
			}
			if rec, ok := restartOf(got); !ok || rec.Replaces != old.UID || rec.BackoffLimit != tc.wantLimit || rec.Count != 1 {
				t.Errorf("restart record %+v (found %t)", rec, ok)
			}
			// The old launcher's Pod, if it still ran, is deleted, and
			// its successor must not run beside it until it is gone.
			oldPod := &corev1.Pod{}
			err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-launcher-abcde"}, oldPod)
			switch {
			case apierrors.IsNotFound(err):
				if !ptr.Deref(l.Spec.Suspend, false) {
					t.Error("new launcher Job not suspended while the old launcher Pod still ran")
				}
			case err != nil:
				t.Fatal(err)
			case !isPodFinished(oldPod):
				t.Errorf("old launcher Pod still running: %s", oldPod.Status.Phase)
			case ptr.Deref(l.Spec.Suspend, false):
				t.Error("new launcher Job suspended though the old launcher Pod had stopped")
			}
		})
	}
}

func TestRestartEndsWhenTheNewAttemptRuns(t *testing.T) {
	f, job, start := runningJob(t, 2)
	f.updatePod(t, "pi-worker-1", disrupt(start.Add(30*time.Second)))
	f.clock.SetTime(start.Add(2 * time.Minute))
	f.reconcile(t, job)
	f.reconcile(t, job)
	f.drainEvents()

	// The restart deleted the old launcher's Pod; once it is gone the new
	// launcher Job runs. Then a reconcile on the same cache neither
	// restarts again nor writes.
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["update Job"] != 1 || ptr.Deref(f.launcher(t).Spec.Suspend, true) {
		t.Fatalf("new launcher not resumed once the old launcher Pod was gone: %v", f.writes)
	}
	f.writes = calls{}
	f.reconcile(t, job)
	if len(f.writes) != 0 {
		t.Fatalf("an idle reconcile wrote %v", f.writes)
	}

	// The disrupted worker is replaced, the new launcher starts: Running
	// again, and no further restart although the old worker's disruption
	// is still on record.
	f.updatePod(t, "pi-worker-1", func(p *corev1.Pod) { p.Status.Conditions = nil })
	f.startLauncher(t, "pi-launcher-fghij", start.Add(3*time.Minute))
	f.clock.SetTime(start.Add(3 * time.Minute))
	f.writes = calls{}
	f.reconcile(t, job)
	got := f.job(t, job)
	if !isTrue(&got.Status, kubeflow.JobRunning) || getCondition(&got.Status, kubeflow.JobRestarting).Status != corev1.ConditionFalse {
		t.Errorf("conditions: %+v", got.Status.Conditions)
	}
	if f.writes["delete Job"] != 0 || f.writes["create Job"] != 0 {
		t.Errorf("restarted again: %v", f.writes)
	}
}

func TestDisruptionBeforeTheLauncherStartedOnlyReplacesTheWorker(t *testing.T) {
	f, job, start := runningJob(t, 2)
	old := f.launcher(t)
	f.updatePod(t, "pi-worker-1", disrupt(start.Add(-time.Second)))
	f.reconcile(t, job)
	if l := f.launcher(t); l.UID != old.UID || f.writes["delete Job"] != 0 {
		t.Errorf("launcher restarted for a disruption older than it: writes %v", f.writes)
	}
}

func TestFirstDisruptionSince(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	kubeflow.SetDefaults(job)
	worker := func(mutate func(*corev1.Pod)) *children {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pi-worker-0", CreationTimestamp: metav1.NewTime(start.Add(-time.Minute))},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		mutate(p)
		return &children{workers: map[int]*corev1.Pod{0: p}}
	}
	cases := map[string]struct {
		kids *children
		want time.Time
	}{
		"running": {kids: worker(func(*corev1.Pod) {})},
		"preempted after the launcher started": {
			kids: worker(disrupt(start.Add(5 * time.Second))), want: start.Add(5 * time.Second),
		},
		"preempted before": {kids: worker(disrupt(start.Add(-5 * time.Second)))},
		"deleted by someone, 30 s grace": {
			kids: worker(func(p *corev1.Pod) {
				p.DeletionTimestamp = ptr.To(metav1.NewTime(start.Add(40 * time.Second)))
				p.DeletionGracePeriodSeconds = ptr.To[int64](30)
			}),
			want: start.Add(10 * time.Second),
		},
		"failed worker deleted by the controller": {
			kids: worker(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodFailed
				p.DeletionTimestamp = ptr.To(metav1.NewTime(start.Add(40 * time.Second)))
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod, at := firstDisruptionSince(job, tc.kids, start, &listing{loaded: true})
			if tc.want.IsZero() != (pod == nil) || !at.Equal(tc.want) {
				t.Errorf("got %v at %v, want %v", pod != nil, at, tc.want)
			}
		})
	}
}
