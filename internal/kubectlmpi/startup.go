package kubectlmpi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// StartupPhase is one step of a job's startup and when it was reached.
type StartupPhase struct {
	// Phase names the step.
	Phase string `json:"phase"`
	// Time is when it was reached; absent when it was not, or when the
	// objects that told it are gone (workers deleted after the job
	// finished).
	Time *metav1.Time `json:"time,omitempty"`
	// SinceCreated is Time less the MPIJob's creation.
	SinceCreated *metav1.Duration `json:"sinceCreated,omitempty"`
}

// The steps of a job's startup, in the order they happen.
const (
	StepJobCreated        = "MPIJob created"
	StepFirstWorkerPod    = "first worker Pod created"
	StepAllWorkerPods     = "all worker Pods created"
	StepWorkersScheduled  = "all workers scheduled"
	StepWorkersRunning    = "all workers running"
	StepWorkersReady      = "all workers ready"
	StepLauncherPod       = "launcher Pod created"
	StepLauncherRunning   = "launcher running"
	StepRunningCondition  = "Running condition"
	StepFinishedCondition = "finished"
)

// StartupPhases reads, from the objects' own timestamps, when the job went
// through each step of its startup. workers are the job's worker Pods;
// launcherPods its launcher's, whose oldest is the launcher of the startup
// (a whole-job restart deletes the launcher Job with its Pods, so that is
// the current attempt's first). The times come from several clocks (the
// API server's for creations and conditions, each kubelet's for container
// starts), so steps a few milliseconds apart may appear out of order.
func StartupPhases(job *kubeflow.MPIJob, workers, launcherPods []corev1.Pod) []StartupPhase {
	n := int(job.Workers())
	var current []*corev1.Pod
	for i := range workers {
		if idx, ok := workerIndex(job, &workers[i]); ok && idx < n {
			current = append(current, &workers[i])
		}
	}
	every := func(at func(*corev1.Pod) *metav1.Time) *metav1.Time {
		if n == 0 || len(current) < n {
			return nil
		}
		return latestOf(current, at)
	}
	created := func(p *corev1.Pod) *metav1.Time { return &p.CreationTimestamp }
	conditionSince := func(t corev1.PodConditionType) func(*corev1.Pod) *metav1.Time {
		return func(p *corev1.Pod) *metav1.Time {
			if c := podCondition(p, t); c != nil && c.Status == corev1.ConditionTrue {
				return &c.LastTransitionTime
			}
			return nil
		}
	}

	var first *metav1.Time
	for _, p := range current {
		if first == nil || p.CreationTimestamp.Before(first) {
			first = &p.CreationTimestamp
		}
	}
	var launcherCreated, launcherRunning *metav1.Time
	if len(launcherPods) > 0 {
		pods := append([]corev1.Pod(nil), launcherPods...)
		byCreation(pods)
		launcherCreated = &pods[0].CreationTimestamp
		launcherRunning = containersStarted(&pods[0])
	}
	var running, finished *metav1.Time
	if c := findCondition(job, kubeflow.JobRunning); c != nil && c.Status == corev1.ConditionTrue {
		running = &c.LastTransitionTime
	}
	finishedStep := StepFinishedCondition
	for _, t := range []kubeflow.JobConditionType{kubeflow.JobSucceeded, kubeflow.JobFailed} {
		if c := findCondition(job, t); c != nil && c.Status == corev1.ConditionTrue {
			finished, finishedStep = &c.LastTransitionTime, StepFinishedCondition+" ("+string(t)+")"
		}
	}

	steps := []StartupPhase{
		{Phase: StepJobCreated, Time: &job.CreationTimestamp},
		{Phase: StepFirstWorkerPod, Time: first},
		{Phase: StepAllWorkerPods, Time: every(created)},
		{Phase: StepWorkersScheduled, Time: every(conditionSince(corev1.PodScheduled))},
		{Phase: StepWorkersRunning, Time: every(containersStarted)},
		{Phase: StepWorkersReady, Time: every(conditionSince(corev1.PodReady))},
		{Phase: StepLauncherPod, Time: launcherCreated},
		{Phase: StepLauncherRunning, Time: launcherRunning},
		{Phase: StepRunningCondition, Time: running},
		{Phase: finishedStep, Time: finished},
	}
	for i := range steps {
		if t := steps[i].Time; t != nil {
			steps[i].Time = new(*t)
			steps[i].SinceCreated = &metav1.Duration{Duration: t.Sub(job.CreationTimestamp.Time)}
		}
	}
	return steps
}

// latestOf is the latest of at over pods, nil if any Pod has none yet.
func latestOf(pods []*corev1.Pod, at func(*corev1.Pod) *metav1.Time) *metav1.Time {
	var last *metav1.Time
	for _, p := range pods {
		t := at(p)
		if t == nil || t.IsZero() {
			return nil
		}
		if last == nil || last.Before(t) {
			last = t
		}
	}
	return last
}
