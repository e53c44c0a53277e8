// Package testpod builds the Pods of an MPIJob for tests, with the status
// the scheduler and kubelet would give them, through a small fluent
// wrapper: Worker(job, 0).Scheduled("node-1", t).Running(t).Obj(). It
// stands in for the kubelet where a test has none (envtest) and needs a
// Pod in a given state.
package testpod

import (
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// Wrapper wraps a Pod under construction.
type Wrapper struct{ corev1.Pod }

// Worker is worker i of the job, named and labelled as the operator makes
// it, pending.
func Worker(job *kubeflow.MPIJob, i int) *Wrapper {
	labels := builder.RoleLabels(job, builder.RoleWorker)
	labels[kubeflow.LabelReplicaIndex] = strconv.Itoa(i)
	return newPod(job, builder.WorkerName(job, i), labels, "worker")
}

// Launcher is a launcher Pod of the job, as the launcher Job's controller
// makes it: named after the Job with the given suffix, pending.
func Launcher(job *kubeflow.MPIJob, suffix string) *Wrapper {
	labels := builder.RoleLabels(job, builder.RoleLauncher)
	labels[batchv1.JobNameLabel] = builder.LauncherName(job)
	return newPod(job, builder.LauncherName(job)+"-"+suffix, labels, "launcher")
}

func newPod(job *kubeflow.MPIJob, name string, labels map[string]string, container string) *Wrapper {
	return &Wrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: job.Namespace, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: container, Image: "mpi"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

// Obj returns the built Pod.
func (w *Wrapper) Obj() *corev1.Pod { return &w.Pod }

// Created sets the creation time (which the API server overwrites).
func (w *Wrapper) Created(at time.Time) *Wrapper {
	w.CreationTimestamp = metav1.NewTime(at)
	return w
}

// Scheduled binds the Pod to node at the given time.
func (w *Wrapper) Scheduled(node string, at time.Time) *Wrapper {
	w.Spec.NodeName = node
	return w.condition(corev1.PodScheduled, at)
}

// Running starts its container at the given time.
func (w *Wrapper) Running(at time.Time) *Wrapper {
	w.Status.Phase = corev1.PodRunning
	w.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: w.container(), Image: "mpi", ImageID: "mpi", Started: new(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}},
	}}
	return w
}

// Ready marks it Ready at the given time.
func (w *Wrapper) Ready(at time.Time) *Wrapper {
	for i := range w.Status.ContainerStatuses {
		w.Status.ContainerStatuses[i].Ready = true
	}
	return w.condition(corev1.PodReady, at)
}

// Exited ends its container with the given code and reason at the given
// time; the Pod fails unless the code is 0.
func (w *Wrapper) Exited(code int32, reason string, at time.Time) *Wrapper {
	started := metav1.NewTime(at)
	if len(w.Status.ContainerStatuses) > 0 && w.Status.ContainerStatuses[0].State.Running != nil {
		started = w.Status.ContainerStatuses[0].State.Running.StartedAt
	}
	w.Status.Phase = corev1.PodSucceeded
	if code != 0 {
		w.Status.Phase = corev1.PodFailed
	}
	w.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: w.container(), Image: "mpi", ImageID: "mpi", Started: new(false),
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: metav1.NewTime(at),
		}},
	}}
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == corev1.PodReady {
			w.Status.Conditions[i].Status = corev1.ConditionFalse
		}
	}
	return w
}

// Restarts sets its container's restart count.
func (w *Wrapper) Restarts(n int32) *Wrapper {
	for i := range w.Status.ContainerStatuses {
		w.Status.ContainerStatuses[i].RestartCount = n
	}
	return w
}

func (w *Wrapper) container() string { return w.Spec.Containers[0].Name }

func (w *Wrapper) condition(t corev1.PodConditionType, at time.Time) *Wrapper {
	c := corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == t {
			w.Status.Conditions[i] = c
			return w
		}
	}
	w.Status.Conditions = append(w.Status.Conditions, c)
	return w
}
