package kubectlmpi

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// Progress is what `kubectl mpi watch` shows of a starting job.
type Progress struct {
	Phase string
	// Workers is how many the job asks for; Scheduled and Running count
	// those whose Pods are bound to a node and running.
	Workers, Scheduled, Running int
	// Launcher is the state of the newest launcher Pod: none, Pending,
	// Running, Succeeded or Failed.
	Launcher string
}

// LauncherNone is the launcher state before its first Pod exists.
const LauncherNone = "none"

// ProgressOf computes the progress of a job from its Pods (workers and
// launchers alike, told apart by their role label).
func ProgressOf(job *kubeflow.MPIJob, pods []corev1.Pod) Progress {
	p := Progress{Phase: Phase(job), Workers: int(job.Workers()), Launcher: LauncherNone}
	var launchers []corev1.Pod
	for i := range pods {
		pod := &pods[i]
		switch pod.Labels[kubeflow.LabelJobRole] {
		case builder.RoleLauncher:
			launchers = append(launchers, *pod)
		case builder.RoleWorker:
			if idx, ok := workerIndex(job, pod); !ok || idx >= p.Workers || pod.DeletionTimestamp != nil {
				continue
			}
			if podConditionTrue(pod, corev1.PodScheduled) || pod.Spec.NodeName != "" {
				p.Scheduled++
			}
			if isRunning(pod) {
				p.Running++
			}
		}
	}
	if len(launchers) > 0 {
		byCreation(launchers)
		p.Launcher = string(launchers[len(launchers)-1].Status.Phase)
		if p.Launcher == "" {
			p.Launcher = string(corev1.PodPending)
		}
	}
	return p
}

// Done reports whether the watch is over: the launcher runs (or already
// ran) or the job finished.
func (p Progress) Done() bool {
	switch {
	case p.Phase == string(kubeflow.JobSucceeded), p.Phase == string(kubeflow.JobFailed):
		return true
	case p.Launcher == string(corev1.PodRunning), p.Launcher == string(corev1.PodSucceeded):
		return true
	}
	return false
}

// String is the progress line.
func (p Progress) String() string {
	return fmt.Sprintf("workers scheduled %d/%d, running %d/%d; launcher %s; phase %s",
		p.Scheduled, p.Workers, p.Running, p.Workers, p.Launcher, p.Phase)
}
