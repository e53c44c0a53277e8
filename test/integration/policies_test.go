package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestForeignManagedByIsLeftAlone(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("remote", ns).Workers(2).ManagedBy(kubeflow.MultiKueueController).Obj())
	// A job of ours created after it, in the same namespace, proves the
	// controller is running and has had time to see both.
	mine := createJob(t, testjob.MakeMPIJob("local", ns).Workers(1).Obj())
	waitWorkers(t, mine, 1)
	consistently(t, "nothing made for and nothing written to a MultiKueue job", time.Second, func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, job)
		if err != nil {
			return false, err
		}
		if len(got.Status.Conditions) > 0 || got.Status.StartTime != nil || got.Status.ReplicaStatuses != nil {
			return false, fmt.Errorf("status written: %+v", got.Status)
		}
		pods, err := workerPods(ctx, job)
		if err != nil || len(pods) > 0 {
			return false, err
		}
		for _, obj := range []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}, &corev1.Service{}, &batchv1.Job{}} {
			name := map[string]string{"*v1.Secret": "remote-ssh", "*v1.ConfigMap": "remote-config", "*v1.Service": "remote", "*v1.Job": "remote-launcher"}[fmt.Sprintf("%T", obj)]
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); !apierrors.IsNotFound(err) {
				return false, fmt.Errorf("%T %s: %w", obj, name, err)
			}
		}
		return true, nil
	})
}

func TestTTLDeletesFinishedJob(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("ttl", ns).Workers(1).TTL(3).Obj())
	launcherJob(t, job)
	finishLauncher(t, job, true, "", "")
	waitCondition(t, job, kubeflow.JobSucceeded, corev1.ConditionTrue)
	eventually(t, "MPIJob deleted after its TTL", func(ctx context.Context) (bool, error) {
		_, err := getJob(ctx, job)
		return apierrors.IsNotFound(err), err
	})
}

func TestActiveDeadlineCoversTheWaitForWorkers(t *testing.T) {
	ns := newNamespace(t)
	// The workers never become Ready, so the launcher is never made: the
	// deadline must still fire, counted from startTime.
	job := createJob(t, testjob.MakeMPIJob("late", ns).Workers(2).WaitForWorkers().ActiveDeadline(2).Obj())
	waitWorkers(t, job, 2)
	got := waitCondition(t, job, kubeflow.JobFailed, corev1.ConditionTrue)
	if c := condition(got, kubeflow.JobFailed); c.Reason != "DeadlineExceeded" || !strings.Contains(c.Message, "activeDeadlineSeconds") {
		t.Errorf("Failed condition: %s %q", c.Reason, c.Message)
	}
	if got.Status.CompletionTime == nil || got.Status.CompletionTime.Sub(got.Status.StartTime.Time) < 2*time.Second {
		t.Errorf("failed too early: start %v completion %v", got.Status.StartTime, got.Status.CompletionTime)
	}
	waitWorkers(t, job, 0)
	if exists, err := launcherExists(context.Background(), job); exists || err != nil {
		t.Errorf("launcher exists after the deadline (err %v)", err)
	}
}

func TestActiveDeadlineStopsRunningLauncher(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("slow", ns).Workers(1).ActiveDeadline(2).Obj())
	runWorkers(t, job, 1)
	launcherJob(t, job)
	startLauncher(t, job)
	waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionTrue)
	waitCondition(t, job, kubeflow.JobFailed, corev1.ConditionTrue)
	eventually(t, "launcher Job deleted", func(ctx context.Context) (bool, error) {
		exists, err := launcherExists(ctx, job)
		return !exists, err
	})
	waitWorkers(t, job, 0)
}

func TestWorkerFailureFailsJobAndEvictionReplacesWorker(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("crash", ns).Workers(2).Obj())
	pods := waitWorkers(t, job, 2)

	// An evicted worker is replaced, not counted as the program's failure.
	evicted := pods[0]
	eventually(t, "evicting worker", func(ctx context.Context) (bool, error) {
		p := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&evicted), p); err != nil {
			return false, err
		}
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason = "Evicted"
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}}
		err := k8s.Status().Update(ctx, p)
		return err == nil, err
	})
	eventually(t, "evicted worker replaced", func(ctx context.Context) (bool, error) {
		p := &corev1.Pod{}
		err := k8s.Get(ctx, client.ObjectKeyFromObject(&evicted), p)
		return err == nil && p.UID != evicted.UID && p.Status.Phase == corev1.PodPending, err
	})
	if got, _ := getJob(context.Background(), job); condition(got, kubeflow.JobFailed) != nil {
		t.Fatal("eviction failed the job")
	}

	crashed := pods[1]
	eventually(t, "crashing worker", func(ctx context.Context) (bool, error) {
		p := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&crashed), p); err != nil {
			return false, err
		}
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}}}}
		err := k8s.Status().Update(ctx, p)
		return err == nil, err
	})
	got := waitCondition(t, job, kubeflow.JobFailed, corev1.ConditionTrue)
	if c := condition(got, kubeflow.JobFailed); c.Reason != "WorkerFailed" || !strings.Contains(c.Message, "exited with code 3") {
		t.Errorf("Failed condition: %s %q", c.Reason, c.Message)
	}
}

// A worker preempted while the launcher runs restarts the job as a whole:
// a new launcher Job replaces the old one, with the program's retries
// intact, and the job is Running again once the new launcher runs.
func TestPreemptedWorkerRestartsTheJob(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("preempted", ns).Workers(2).BackoffLimit(1).Obj())
	runWorkers(t, job, 2)
	old := launcherJob(t, job)
	startLauncher(t, job)
	waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionTrue)

	victim := waitWorkers(t, job, 2)[1]
	// API times are whole seconds: the preemption must come a second later
	// than the launcher's start to count as after it.
	started := launcherJob(t, job).Status.StartTime
	if started == nil {
		t.Fatal("launcher Job has no startTime")
	}
	eventually(t, "a whole second past the launcher's startTime", func(context.Context) (bool, error) {
		now := metav1.Now().Rfc3339Copy()
		return now.After(started.Time), fmt.Errorf("now %v, launcher startTime %v", now, started)
	})
	eventually(t, "preempting a worker", func(ctx context.Context) (bool, error) {
		p := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&victim), p); err != nil {
			return false, err
		}
		at := metav1.Now()
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler", LastTransitionTime: at,
		})
		err := k8s.Status().Update(ctx, p)
		return err == nil, err
	})
	got := waitCondition(t, job, kubeflow.JobRestarting, corev1.ConditionTrue)
	if c := condition(got, kubeflow.JobRunning); c.Status != corev1.ConditionFalse || c.Reason != "MPIJobRestarting" {
		t.Errorf("Running condition while restarting: %+v", c)
	}
	var fresh *batchv1.Job
	eventually(t, "a new launcher Job, pi-launcher-1", func(ctx context.Context) (bool, error) {
		fresh = &batchv1.Job{}
		err := k8s.Get(ctx, client.ObjectKey{Namespace: old.Namespace, Name: old.Name + "-1"}, fresh)
		return err == nil && fresh.UID != old.UID, client.IgnoreNotFound(err)
	})
	if l := fresh.Spec.BackoffLimit; l == nil || *l != 1 {
		t.Errorf("new launcher backoffLimit %v, want 1: the preemption is not the program's failure", l)
	}

	startLauncher(t, job)
	got = waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionTrue)
	if c := condition(got, kubeflow.JobRestarting); c.Status != corev1.ConditionFalse {
		t.Errorf("Restarting condition once running again: %+v", c)
	}
	if l := launcherJob(t, job); l.UID != fresh.UID {
		t.Errorf("launcher replaced twice")
	}
}
