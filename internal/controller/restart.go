package controller

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// A job restarts as a whole when the infrastructure takes a worker away
// while mpirun may be using it (design §4.3): mpirun cannot get a rank
// back, so its attempt is ended and a new launcher Job starts once the
// worker is replaced. Such a restart does not use up backoffLimit: the new
// launcher Job is given the retries the program has left, that is the old
// Job's backoffLimit less the failures that came before the disruption.
// A launcher that failed because its worker vanished is not the program's
// failure either, even when the Job controller counted it first.

// replacement is a launcher Job this controller deleted to restart the
// job, and the backoffLimit its successor gets.
type replacement struct {
	old          types.UID
	backoffLimit int32
}

// restartOnDisruption restarts the job when a worker was disrupted after
// the current launcher started.
func (r *Reconciler) restartOnDisruption(ctx context.Context, s *state, kids *children) error {
	l := kids.launcher
	if l == nil || l.Status.StartTime == nil || jobCondition(l, batchv1.JobComplete) != nil {
		return nil
	}
	pod, at := firstDisruptionSince(s.job, kids, l.Status.StartTime.Time)
	if pod == nil {
		return nil
	}
	caused := failuresSince(l, kids.launcherPods, at)
	if jobCondition(l, batchv1.JobFailed) != nil && caused == 0 {
		// Failed, and not because of the disruption: the outcome stands.
		return nil
	}
	left := max(ptr.Deref(l.Spec.BackoffLimit, defaultBackoffLimit)-max(programFailures(l, kids.launcherPods)-caused, 0), 0)
	err := r.Client.Delete(ctx, l, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &l.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting launcher Job to restart: %w", err)
	}
	r.replaced.Store(jobKey(s.job), replacement{old: l.UID, backoffLimit: left})
	kids.launcher, kids.launcherPods, kids.launcherRunning = nil, nil, false

	msg := fmt.Sprintf("MPIJob %s/%s is restarting: worker Pod %s was disrupted (%s).", s.job.Namespace, s.job.Name, pod.Name, disruption(pod))
	setCondition(s.status, kubeflow.JobRestarting, corev1.ConditionTrue, ReasonRestarting, msg, s.now)
	setFalseIfPresent(s.status, kubeflow.JobRunning, ReasonRestarting, msg, s.now)
	return nil
}

// defaultBackoffLimit is the Job API's default.
const defaultBackoffLimit = 6

// firstDisruptionSince returns a worker that the infrastructure (or
// someone deleting it) took away after since, and when. Disruptions from before the current launcher
// started are already repaired by replacing the worker; restarting for
// them again would loop.
func firstDisruptionSince(job *kubeflow.MPIJob, kids *children, since time.Time) (*corev1.Pod, time.Time) {
	policy := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].RestartPolicy
	for i := range int(job.Workers()) {
		p := kids.workers[i]
		if p == nil {
			continue
		}
		at, ok := disruptedAt(p)
		if !ok && isTerminating(p) && !isPodFinished(p) {
			// Deleted, by a drain without eviction or by hand: not the
			// program's failure either.
			at, ok = deletionRequested(p), true
		}
		if !ok && policy == kubeflow.RestartPolicyExitCode && p.Status.Phase == corev1.PodFailed && isRetryableExit(p) {
			at, ok = lastTermination(p), true
		}
		if ok && at.After(since) {
			return p, at
		}
	}
	return nil, time.Time{}
}

// disruptedAt reports when a Pod got its DisruptionTarget condition, which
// eviction, preemption and node loss set before they stop the Pod.
func disruptedAt(pod *corev1.Pod) (time.Time, bool) {
	if c := findPodCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime.Time, true
	}
	if pod.Status.Phase == corev1.PodFailed && isDisrupted(pod) {
		return lastTermination(pod), true
	}
	return time.Time{}, false
}

// deletionRequested is when the Pod's deletion was asked for: its
// deletionTimestamp is that moment plus the grace period.
func deletionRequested(pod *corev1.Pod) time.Time {
	grace := time.Duration(ptr.Deref(pod.DeletionGracePeriodSeconds, 0)) * time.Second
	return pod.DeletionTimestamp.Add(-grace)
}

func disruption(pod *corev1.Pod) string {
	if c := findPodCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue {
		return c.Reason
	}
	if isTerminating(pod) && !isPodFinished(pod) {
		return "deleted"
	}
	if pod.Status.Reason != "" {
		return pod.Status.Reason
	}
	return podFailure(pod)
}

// lastTermination is when a container of the Pod last stopped with an
// error; a Pod with none dates from its creation.
func lastTermination(pod *corev1.Pod) time.Time {
	t := pod.CreationTimestamp.Time
	for _, cs := range pod.Status.ContainerStatuses {
		for _, term := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
			if term != nil && term.ExitCode != 0 && term.FinishedAt.After(t) {
				t = term.FinishedAt.Time
			}
		}
	}
	return t
}

// programFailures counts the launcher's failures the way the Job
// controller weighs them against backoffLimit: failed Pods, plus container
// restarts of Pods still running (restartPolicy OnFailure).
func programFailures(l *batchv1.Job, pods []*corev1.Pod) int32 {
	n := l.Status.Failed
	for _, p := range pods {
		if isPodFinished(p) {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			n += cs.RestartCount
		}
	}
	return n
}

// failuresSince counts the launcher's failures already weighed against
// backoffLimit that happened at or after t: the lost worker caused them.
func failuresSince(l *batchv1.Job, pods []*corev1.Pod, t time.Time) int32 {
	uncounted := map[types.UID]bool{}
	if u := l.Status.UncountedTerminatedPods; u != nil {
		for _, uid := range u.Failed {
			uncounted[uid] = true
		}
	}
	var n int32
	for _, p := range pods {
		if uncounted[p.UID] || p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		// The API's timestamps are whole seconds.
		end := lastTermination(p)
		if end.After(p.CreationTimestamp.Time) && !end.Before(t.Truncate(time.Second)) {
			n++
		}
	}
	return n
}
