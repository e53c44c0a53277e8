package kubectlmpi

import (
	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
)

// PhasePending is the phase of a job the operator has not yet marked
// Created (it has no true condition).
const PhasePending = "Pending"

// phaseRank orders the conditions that became true at the same instant
// (the operator sets several in one status write): the later in a job's
// life wins.
var phaseRank = map[kubeflow.JobConditionType]int{
	kubeflow.JobCreated:    0,
	kubeflow.JobRunning:    1,
	kubeflow.JobRestarting: 2,
	kubeflow.JobSuspended:  3,
	kubeflow.JobSucceeded:  4,
	kubeflow.JobFailed:     4,
}

// Phase is the job's latest true condition: Created, Running, Restarting,
// Suspended, Succeeded or Failed; Pending when none is true. A finished
// job is Succeeded or Failed whatever else is true.
func Phase(job *kubeflow.MPIJob) string {
	var best *kubeflow.JobCondition
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Status != corev1.ConditionTrue {
			continue
		}
		if c.Type == kubeflow.JobSucceeded || c.Type == kubeflow.JobFailed {
			return string(c.Type)
		}
		if best == nil || c.LastTransitionTime.After(best.LastTransitionTime.Time) ||
			(c.LastTransitionTime.Equal(&best.LastTransitionTime) && phaseRank[c.Type] > phaseRank[best.Type]) {
			best = c
		}
	}
	if best == nil {
		return PhasePending
	}
	return string(best.Type)
}

// AnnotationRestart is the annotation where the operator records the
// job's latest whole-job restart.
const AnnotationRestart = jobrecord.AnnotationRestart

// restartOf reads the restart annotation; a missing or unreadable one (the
// job never restarted, or upstream's operator ran it) is no restart.
func restartOf(job *kubeflow.MPIJob) jobrecord.Restart {
	rec, _ := jobrecord.RestartOf(job)
	return rec
}

// findCondition returns the job's condition of type t, or nil.
func findCondition(job *kubeflow.MPIJob, t kubeflow.JobConditionType) *kubeflow.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == t {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}
