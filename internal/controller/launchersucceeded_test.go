package controller

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// launcherPodSucceeded plays the kubelet: mpirun exited 0. The Job
// controller has not counted the Pod yet, which takes it about two
// seconds; the kubelet writes the Pod's Succeeded phase about a second
// after the exit.
func (f *fixture) launcherPodSucceeded(t *testing.T, at time.Time) {
	t.Helper()
	f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "launcher",
			State: corev1.ContainerState{Terminated: exited(0, at)}}}
	})
}

// The launcher Pod's success is the job's: the MPIJob is Succeeded before
// the Job controller counts it, and nothing that happens in between (a
// worker lost or failed, the deadline) changes the outcome.
func TestLauncherPodSuccessEndsTheJob(t *testing.T) {
	cases := map[string]func(f *fixture, start time.Time){
		"nothing else": func(*fixture, time.Time) {},
		"the Pod's phase written": func(f *fixture, _ time.Time) {
			f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
		},
		"a worker evicted": func(f *fixture, start time.Time) { f.updatePod(t, "pi-worker-1", disrupt(start.Add(41*time.Second))) },
		"a worker failed": func(f *fixture, start time.Time) {
			f.updatePod(t, "pi-worker-1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })
		},
		"the deadline passed": func(f *fixture, start time.Time) { f.clock.SetTime(start.Add(time.Hour)) },
	}
	for name, then := range cases {
		t.Run(name, func(t *testing.T) {
			f, job, start := running(t, testjob.MakeMPIJob("pi", "ns").Workers(2).BackoffLimit(2).
				ActiveDeadline(600).CleanPodPolicy(kubeflow.CleanPodPolicyAll).Obj())
			f.launcherPodSucceeded(t, start.Add(40*time.Second))
			f.clock.SetTime(start.Add(42 * time.Second))
			then(f, start)
			f.reconcile(t, job)

			got := f.job(t, job)
			if !isTrue(&got.Status, kubeflow.JobSucceeded) || isTrue(&got.Status, kubeflow.JobFailed) {
				t.Fatalf("conditions %+v, want Succeeded", got.Status.Conditions)
			}
			if _, ok := got.Annotations[AnnotationRestart]; ok {
				t.Errorf("restart recorded after the launcher succeeded: %s", got.Annotations[AnnotationRestart])
			}
			l := got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeLauncher]
			if l.Active != 0 || l.Succeeded != 1 {
				t.Errorf("launcher counts active %d succeeded %d, want 0 and 1", l.Active, l.Succeeded)
			}
			// The outcome first, then the cleanup.
			if f.writes["delete Pod"] != 0 {
				t.Errorf("writes %v: workers deleted before the outcome was written", f.writes)
			}
			f.reconcile(t, job)
			if f.writes["delete Pod"] == 0 {
				t.Errorf("writes %v: cleanPodPolicy All deleted no worker", f.writes)
			}
		})
	}
}

// A Job the Job controller is failing (FailureTarget: its last Pod failed
// past backoffLimit, or a podFailurePolicy rule) is not made a success by
// a Pod that succeeded before.
func TestSucceededPodOfAFailingLauncherIsNotSuccess(t *testing.T) {
	f, job, start := runningJob(t, 2)
	f.launcherPodSucceeded(t, start.Add(40*time.Second))
	f.updateLauncher(t, func(l *batchv1.Job) {
		l.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue,
			Reason: "DeadlineExceeded", LastTransitionTime: metav1.NewTime(start.Add(40 * time.Second))}}
	})
	f.clock.SetTime(start.Add(42 * time.Second))
	f.reconcile(t, job)
	if got := f.job(t, job); isTrue(&got.Status, kubeflow.JobSucceeded) {
		t.Errorf("conditions %+v: Succeeded while the launcher Job fails", got.Status.Conditions)
	}
}

// Only a Pod whose every container exited 0, none to be restarted, counts
// before its phase says so.
func TestSucceeds(t *testing.T) {
	done := func(code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	running := corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	pod := func(policy corev1.RestartPolicy, containers int, statuses ...corev1.ContainerStatus) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: policy, Containers: make([]corev1.Container, containers)}}
		p.Status.Phase, p.Status.ContainerStatuses = corev1.PodRunning, statuses
		return p
	}
	deleted := func(p *corev1.Pod) *corev1.Pod {
		p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		return p
	}
	succeeded := func(p *corev1.Pod) *corev1.Pod {
		p.Status.Phase = corev1.PodSucceeded
		return p
	}
	cases := map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"exited 0, Never":             {pod(corev1.RestartPolicyNever, 1, done(0)), true},
		"exited 0, OnFailure":         {pod(corev1.RestartPolicyOnFailure, 1, done(0)), true},
		"exited 0, Always: restarted": {pod(corev1.RestartPolicyAlways, 1, done(0)), false},
		"exited 1":                    {pod(corev1.RestartPolicyNever, 1, done(1)), false},
		"a sidecar still runs":        {pod(corev1.RestartPolicyNever, 2, done(0), running), false},
		"a container not reported":    {pod(corev1.RestartPolicyNever, 2, done(0)), false},
		"no status yet":               {pod(corev1.RestartPolicyNever, 1), false},
		"being deleted, exited 0":     {deleted(pod(corev1.RestartPolicyNever, 1, done(0))), false},
		"being deleted, Succeeded":    {deleted(succeeded(pod(corev1.RestartPolicyNever, 1, done(0)))), false},
		"Succeeded":                   {succeeded(pod(corev1.RestartPolicyNever, 1, done(0))), true},
	}
	for name, tc := range cases {
		if got := succeeds(tc.pod); got != tc.want {
			t.Errorf("%s: succeeds = %v, want %v", name, got, tc.want)
		}
	}
}
