package controller

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// The functions here compute status in memory, from the job and what the
// cache shows; they do no I/O.

func markCreated(s *state) {
	if getCondition(s.status, kubeflow.JobCreated) == nil {
		setCondition(s.status, kubeflow.JobCreated, corev1.ConditionTrue, ReasonCreated,
			fmt.Sprintf("MPIJob %s/%s is created.", s.job.Namespace, s.job.Name), s.now)
	}
}

// markStarted sets startTime when the job starts and again when it
// resumes, so that activeDeadlineSeconds never counts suspended time.
func markStarted(s *state) {
	if isTrue(s.status, kubeflow.JobSuspended) {
		setCondition(s.status, kubeflow.JobSuspended, corev1.ConditionFalse, ReasonResumed,
			fmt.Sprintf("MPIJob %s/%s is resumed.", s.job.Namespace, s.job.Name), s.now)
		s.status.StartTime = nil
	}
	if s.status.StartTime == nil {
		s.status.StartTime = ptr.To(s.now)
	}
}

func markSuspended(s *state) {
	msg := fmt.Sprintf("MPIJob %s/%s is suspended.", s.job.Namespace, s.job.Name)
	setCondition(s.status, kubeflow.JobSuspended, corev1.ConditionTrue, ReasonSuspended, msg, s.now)
	setFalseIfPresent(s.status, kubeflow.JobRunning, ReasonSuspended, msg, s.now)
}

// markFailed ends the job as Failed.
func (r *Reconciler) markFailed(s *state, reason, msg string) {
	setCondition(s.status, kubeflow.JobFailed, corev1.ConditionTrue, reason, msg, s.now)
	setFalseIfPresent(s.status, kubeflow.JobRunning, reason, msg, s.now)
	setFalseIfPresent(s.status, kubeflow.JobRestarting, reason, msg, s.now)
	if s.status.CompletionTime == nil {
		s.status.CompletionTime = ptr.To(s.now)
	}
}

// updateReplicaStatuses counts the Pods of each role.
func updateReplicaStatuses(s *state, kids *children) {
	workers := &kubeflow.ReplicaStatus{Selector: builder.WorkerSelector(s.job).String()}
	for _, p := range kids.workerPods(func(*corev1.Pod) bool { return true }) {
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			workers.Succeeded++
		case p.Status.Phase == corev1.PodFailed:
			workers.Failed++
		case isRunning(p):
			workers.Active++
		}
	}
	launcher := &kubeflow.ReplicaStatus{}
	if l := kids.launcher; l != nil {
		// The selector names this launcher Job's Pods, so it changes
		// with each launcher Job: launcher attempts are counted from the
		// change of the counts under one selector (metrics_record.go).
		launcher.Selector = launcherSelector(l)
		launcher.Active = l.Status.Active
		launcher.Succeeded = l.Status.Succeeded
		launcher.Failed = l.Status.Failed
		if kids.launcherSucceeded {
			// Ahead of the Job controller's count (launcherSucceeded).
			launcher.Active, launcher.Succeeded = 0, max(launcher.Succeeded, 1)
		}
	}
	s.status.ReplicaStatuses = map[kubeflow.MPIReplicaType]*kubeflow.ReplicaStatus{
		kubeflow.MPIReplicaTypeLauncher: launcher,
		kubeflow.MPIReplicaTypeWorker:   workers,
	}
}

// launcherSelector is the selector of the launcher Job's Pods. The API
// server defaults it to the Job's controller-uid label; a Job read before
// that (only in tests) gets the same string from its UID.
func launcherSelector(l *batchv1.Job) string {
	if l.Spec.Selector != nil {
		return metav1.FormatLabelSelector(l.Spec.Selector)
	}
	return batchv1.ControllerUidLabel + "=" + string(l.UID)
}

// settleActive makes a finished job's Active counts say what still runs:
// the Pods cleanPodPolicy names are being deleted (cleaned), and a
// finished launcher Job has none. Only Active moves: the Succeeded and
// Failed counts written when the job finished stand, even once the Pods
// they counted are gone. Without this a Succeeded job went on reporting
// the workers it had just deleted as active.
func settleActive(s *state, kids *children, cleaned func(*corev1.Pod) bool) {
	if w := s.status.ReplicaStatuses[kubeflow.MPIReplicaTypeWorker]; w != nil {
		w.Active = 0
		for _, p := range kids.workerPods(isRunning) {
			if cleaned == nil || !cleaned(p) {
				w.Active++
			}
		}
	}
	if l := s.status.ReplicaStatuses[kubeflow.MPIReplicaTypeLauncher]; l != nil {
		l.Active = 0
		if kids.launcher != nil && !isJobFinished(kids.launcher) && !kids.launcherSucceeded {
			l.Active = kids.launcher.Status.Active
		}
	}
}

// updateProgress sets Running, Succeeded and Failed from the workers and
// the launcher Job.
func updateProgress(s *state, kids *children) {
	job, l := s.job, kids.launcher
	name := job.Namespace + "/" + job.Name
	if l != nil {
		if kids.launcherSucceeded {
			msg := fmt.Sprintf("MPIJob %s successfully completed.", name)
			setCondition(s.status, kubeflow.JobSucceeded, corev1.ConditionTrue, ReasonSucceeded, msg, s.now)
			setFalseIfPresent(s.status, kubeflow.JobRunning, ReasonSucceeded, msg, s.now)
			setFalseIfPresent(s.status, kubeflow.JobRestarting, ReasonSucceeded, msg, s.now)
			s.status.CompletionTime = completionTime(l, s)
			return
		}
		if c := jobCondition(l, batchv1.JobFailed); c != nil {
			_, how := lastFailedAttempt(kids.launcherPods)
			if how == "" {
				if failureNotSeenYet(s, c, kids.launcherPods) {
					return
				}
				how = recordedAttempt(job)
			}
			reason := c.Reason
			if reason == "" {
				reason = ReasonFailed
			}
			msg := fmt.Sprintf("MPIJob %s failed: launcher Job %s: %s", name, l.Name, c.Message)
			if how != "" {
				msg += "; last failed attempt: " + how
			}
			setCondition(s.status, kubeflow.JobFailed, corev1.ConditionTrue, reason, msg, s.now)
			setFalseIfPresent(s.status, kubeflow.JobRunning, reason, msg, s.now)
			setFalseIfPresent(s.status, kubeflow.JobRestarting, reason, msg, s.now)
			s.status.CompletionTime = completionTime(l, s)
			return
		}
	}
	launcherRunning := l != nil && (kids.launcherRunning || ptr.Deref(l.Status.Ready, 0) > 0)
	if launcherRunning && kids.allWorkers(int(job.Workers()), isRunning) {
		if !isTrue(s.status, kubeflow.JobRunning) {
			s.startup = startupOf(s, kids)
		}
		msg := fmt.Sprintf("MPIJob %s is running.", name)
		setCondition(s.status, kubeflow.JobRunning, corev1.ConditionTrue, ReasonRunning, msg, s.now)
		setFalseIfPresent(s.status, kubeflow.JobRestarting, ReasonRunning, msg, s.now)
	}
}

// failureDetailWait bounds how long the Failed transition waits for the
// cache to show how the launcher's last attempt failed.
const failureDetailWait = 5 * time.Second

// failureNotSeenYet reports whether the launcher Job failed while the
// cache still shows a Pod of it unfinished: Jobs and Pods are watched
// apart, and the Job's condition can arrive first. Written then, the
// Failed condition would lack the attempt's exit code (and its event the
// log's end) for good: it is final, and MultiKueue copies it to the
// manager and deletes the worker's copy. It asks for a reconcile soon,
// and waits no longer than failureDetailWait after the Job failed.
func failureNotSeenYet(s *state, failed *batchv1.JobCondition, pods []*corev1.Pod) bool {
	left := failed.LastTransitionTime.Add(failureDetailWait).Sub(s.now.Time)
	if left <= 0 {
		return false
	}
	for _, p := range pods {
		if !isPodFinished(p) && !isTerminating(p) {
			s.requeueAfter(min(left, conflictRetry))
			return true
		}
	}
	return false
}

func completionTime(l *batchv1.Job, s *state) *metav1.Time {
	if l.Status.CompletionTime != nil {
		return l.Status.CompletionTime
	}
	return ptr.To(s.now)
}
