package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

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
			f.failLauncher(t, 137, 2, 3, start.Add(31*time.Second))
		},
		wantRestart: true, wantLimit: 0,
	}, {
		name: "launcher failed for good before the disruption: the outcome stands",
		before: func(f *fixture, start time.Time) {
			f.failLauncher(t, 1, 0, 3, start.Add(20*time.Second))
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
			pod, at, _ := firstDisruptionSince(job, tc.kids, start)
			if tc.want.IsZero() != (pod == nil) || !at.Equal(tc.want) {
				t.Errorf("got %v at %v, want %v", pod != nil, at, tc.want)
			}
		})
	}
}

// Found by make chaos-short (seed 12320): a worker was lost while no
// operator led, the launcher failed for it, then the job was suspended
// and resumed, and the suspend's own deletion of worker 0 came first in
// index order. Its later time made the launcher's failure look like the
// program's, and the job ended Failed. The earliest loss decides.
func TestEarliestLossDecidesWhatTheLauncherFailedFor(t *testing.T) {
	f, job, start := runningJob(t, 0)
	f.failLauncher(t, 1, 0, 1, start.Add(31*time.Second))
	// Worker 1 went unseen; worker 0 is being deleted now, long after.
	f.deletePod(t, "pi-worker-1")
	w0 := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-0"}, w0); err != nil {
		t.Fatal(err)
	}
	w0.Finalizers = []string{"test/hold"}
	if err := f.client.Update(context.Background(), w0); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(context.Background(), w0); err != nil {
		t.Fatal(err)
	}
	f.clock.SetTime(start.Add(2 * time.Minute))
	f.reconcile(t, job)

	got := f.job(t, job)
	if isTrue(&got.Status, kubeflow.JobFailed) {
		t.Fatalf("job Failed, though its launcher failed after worker 1 was lost: %+v", got.Status.Conditions)
	}
	if _, ok := got.Annotations[AnnotationRestart]; !ok {
		t.Errorf("no restart recorded")
	}
}
