package builder

import (
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// WorkersGate is the scheduling gate that holds a job's first launcher Pod
// back until every worker has been made. The launcher Job is then made
// beside the workers rather than after them, and the Job controller's turn
// to make its Pod overlaps theirs; the controller removes the gate once
// its cache shows every worker (controller/launcher.go says why the order
// matters).
const WorkersGate = "kubeflow.org/mpi-workers"

// GateOnWorkers adds WorkersGate to the launcher Job's Pod template.
func GateOnWorkers(l *batchv1.Job) {
	spec := &l.Spec.Template.Spec
	if !slices.ContainsFunc(spec.SchedulingGates, isWorkersGate) {
		spec.SchedulingGates = append(spec.SchedulingGates, corev1.PodSchedulingGate{Name: WorkersGate})
	}
}

// GatedOnWorkers reports whether a launcher Pod still waits on WorkersGate.
func GatedOnWorkers(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, isWorkersGate)
}

func isWorkersGate(g corev1.PodSchedulingGate) bool { return g.Name == WorkersGate }
