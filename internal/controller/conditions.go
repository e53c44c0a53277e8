package controller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Reasons of the job's conditions, also the reasons of their events.
const (
	ReasonCreated              = "MPIJobCreated"
	ReasonRunning              = "MPIJobRunning"
	ReasonSucceeded            = "MPIJobSucceeded"
	ReasonSuspended            = "MPIJobSuspended"
	ReasonResumed              = "MPIJobResumed"
	ReasonFailed               = "MPIJobFailed"
	ReasonValidationError      = "ValidationError"
	ReasonDeadlineExceeded     = "DeadlineExceeded"
	ReasonBackoffLimitExceeded = "BackoffLimitExceeded"
	ReasonWorkerFailed         = "WorkerFailed"
	ReasonRestarting           = "MPIJobRestarting"
)

// setCondition sets a condition in place and reports whether anything
// changed. Timestamps move only on a real change, so that setting the same
// condition every reconcile never causes a status write.
func setCondition(st *kubeflow.JobStatus, t kubeflow.JobConditionType, s corev1.ConditionStatus, reason, msg string, now metav1.Time) bool {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status == s && c.Reason == reason && c.Message == msg {
			return false
		}
		if c.Status != s {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message, c.LastUpdateTime = s, reason, msg, now
		return true
	}
	st.Conditions = append(st.Conditions, kubeflow.JobCondition{
		Type: t, Status: s, Reason: reason, Message: msg, LastUpdateTime: now, LastTransitionTime: now,
	})
	return true
}

// setFalseIfPresent turns a condition False only if it exists: a condition
// that never applied is not added just to say so.
func setFalseIfPresent(st *kubeflow.JobStatus, t kubeflow.JobConditionType, reason, msg string, now metav1.Time) {
	if getCondition(st, t) != nil {
		setCondition(st, t, corev1.ConditionFalse, reason, msg, now)
	}
}

func getCondition(st *kubeflow.JobStatus, t kubeflow.JobConditionType) *kubeflow.JobCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

func isTrue(st *kubeflow.JobStatus, t kubeflow.JobConditionType) bool {
	c := getCondition(st, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// isFinished reports whether the job reached Succeeded or Failed.
func isFinished(st *kubeflow.JobStatus) bool {
	return isTrue(st, kubeflow.JobSucceeded) || isTrue(st, kubeflow.JobFailed)
}

// transition is a condition that became True (or Suspended that became
// False): one event, and perhaps a metric, once the status is written.
type transition struct {
	Type    kubeflow.JobConditionType
	Reason  string
	Message string
	Resumed bool
}

// transitions lists what changed between two statuses, in the order of
// the new conditions.
func transitions(old, cur *kubeflow.JobStatus) []transition {
	var out []transition
	for _, c := range cur.Conditions {
		prev := getCondition(old, c.Type)
		switch {
		case c.Status == corev1.ConditionTrue && (prev == nil || prev.Status != corev1.ConditionTrue):
			out = append(out, transition{Type: c.Type, Reason: c.Reason, Message: c.Message})
		case c.Type == kubeflow.JobSuspended && c.Status == corev1.ConditionFalse && prev != nil && prev.Status == corev1.ConditionTrue:
			out = append(out, transition{Type: c.Type, Reason: c.Reason, Message: c.Message, Resumed: true})
		}
	}
	return out
}
