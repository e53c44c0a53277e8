package controller

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
)

// A job restarts as a whole when the infrastructure takes a worker away
// while mpirun may be using it (design §4.3): mpirun cannot get a rank
// back, so its attempt is ended and a new launcher Job starts once the
// worker is replaced. Such a restart does not use up backoffLimit: the new
// launcher Job is given the retries the program has left, that is the old
// Job's backoffLimit less the failures that came before the disruption.
// A launcher that failed because its worker vanished is not the program's
// failure either, even when the Job controller counted it first.

// A restart is done in two reconciles so that every step a controller
// takes follows from what is written in the API: the first records it on
// the MPIJob (durable.go); a reconcile whose cache shows the record ends
// the old launcher Job, and the launcher step makes its successor with the
// retries recorded. A controller that takes over at any point in between
// reads the record and carries on; one that never saw it decides again,
// the same way.

// restartOnDisruption records a restart when a worker was disrupted after
// the current launcher started, and marks a restart in the status until
// the new launcher Job exists. It reports whether it recorded one: the
// reconcile then ends, as what the cache shows of the old attempt no
// longer decides anything.
func (r *Reconciler) restartOnDisruption(ctx context.Context, s *state, kids *children) (bool, error) {
	if rec, ok := kids.restart(); ok && (kids.replaced != nil || kids.launcher == nil) {
		markRestarting(s, rec)
		return false, nil
	}
	l := kids.launcher
	// sync ends a job whose launcher succeeded before this step; the check
	// keeps that rule here too, should the steps ever be reordered: a
	// program that exited 0 is never restarted.
	if l == nil || l.Status.StartTime == nil || kids.launcherSucceeded {
		return false, nil
	}
	pod, at, own := firstDisruptionSince(s.job, kids, l.Status.StartTime.Time)
	if pod == nil {
		return false, nil
	}
	caused := failuresSince(l, kids.launcherPods, at)
	if jobCondition(l, batchv1.JobFailed) != nil && caused == 0 {
		// Failed, and not because of the disruption: the outcome stands.
		return false, nil
	}
	limit := ptr.Deref(l.Spec.BackoffLimit, defaultBackoffLimit)
	left := max(limit-max(programFailures(l, kids.launcherPods)-caused, 0), 0)
	if own {
		// The worker's own failure spends a retry, as the launcher's do.
		if left == 0 {
			if err := r.recordFailure(ctx, s.job, pod); err != nil {
				return true, err
			}
			r.markFailed(s, ReasonBackoffLimitExceeded, fmt.Sprintf("worker Pod %s failed: %s; no retry of backoffLimit is left",
				pod.Name, podFailure(pod)))
			return true, r.stopEverything(ctx, s.job, kids)
		}
		left--
	}
	prev, _ := restartOf(s.job)
	cause := fmt.Sprintf("worker Pod %s was disrupted (%s)", pod.Name, disruption(pod))
	if own {
		cause = fmt.Sprintf("worker Pod %s failed (%s), which spent a retry", pod.Name, podFailure(pod))
	}
	lost := failureOf(pod)
	rec := restartRecord{Replaces: l.UID, BackoffLimit: left, Count: prev.Count + 1, Cause: cause, Lost: &lost}
	avoided := r.avoidIn(&rec, prev, pod, own)
	if err := r.recordRestart(ctx, s.job, rec); err != nil {
		return false, err
	}
	r.announceAvoided(ctx, s.job, avoided, pod.Name)
	// The figures behind the retries given back, for a restart that
	// spent one the user did not expect it to.
	ctrl.LoggerFrom(ctx).Info("Restart recorded", "cause", rec.Cause, "count", rec.Count, "replaces", l.UID,
		"backoffLimit", rec.BackoffLimit, "failures", programFailures(l, kids.launcherPods), "causedByLoss", caused, "lostAt", at)
	markRestarting(s, rec)
	return true, nil
}

func markRestarting(s *state, rec restartRecord) {
	msg := fmt.Sprintf("MPIJob %s/%s is restarting: %s.", s.job.Namespace, s.job.Name, rec.Cause)
	setCondition(s.status, kubeflow.JobRestarting, corev1.ConditionTrue, ReasonRestarting, msg, s.now)
	setFalseIfPresent(s.status, kubeflow.JobRunning, ReasonRestarting, msg, s.now)
}

// endReplacedLauncher deletes the launcher Job a recorded restart ends,
// and the Pods of earlier launcher Jobs still running. It runs whether or
// not the job is suspended: a suspended job must not keep the old attempt
// running either. The Pods are deleted here rather than left to the
// garbage collector: the next attempt waits for them to stop
// (previousAttemptStopping), and the collector can lag by minutes (it
// rebuilds its graph after an API server restart; found by make chaos).
func (r *Reconciler) endReplacedLauncher(ctx context.Context, kids *children) error {
	var errs []error
	if l := kids.replaced; l != nil && l.DeletionTimestamp == nil {
		err := r.Client.Delete(ctx, l, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &l.UID})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting launcher Job to restart: %w", err))
		}
	}
	for _, p := range kids.formerLaunchers {
		if isTerminating(p) {
			continue
		}
		err := r.deletePod(ctx, p)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting Pod %s of an earlier launcher Job: %w", p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// defaultBackoffLimit is the Job API's default.
const defaultBackoffLimit = 6

// firstDisruptionSince returns the worker that the infrastructure (or
// someone deleting it) took away first after since, when, and whether it
// was the worker's own failure (own): a retryable exit code under
// ExitCode, which spends a retry, where the others are free. The
// earliest decides which of the launcher's failures the losses caused (a
// later deletion, by a suspend say, must not hide an earlier loss; found
// by make chaos-short, seed 12320). Disruptions from
// before the current launcher started are already repaired by replacing
// the worker; restarting for them again would loop. Whether the hostfile
// lists a worker is read from the MPIJob (AnnotationHostfileWorkers),
// never from the ConfigMap, which the cache may show late.
//   - A worker being deleted counts only if the hostfile lists it: one the
//     controller is deleting after a scale-down, still stopping when the
//     job is scaled up again, was no longer part of the attempt.
//   - A worker whose Pod is gone without the controller having seen it
//     stop (force-deleted, or lost while no operator led) counts if it was
//     part of the attempt: the launcher's own container ran, which it
//     does only once every host of the hostfile resolved, and the worker
//     is one the launcher Job was made for (AnnotationWorkers: not one a
//     scale-up added) and the hostfile lists. When it went is not known,
//     so the attempt's start stands for it.
func firstDisruptionSince(job *kubeflow.MPIJob, kids *children, since time.Time) (*corev1.Pod, time.Time, bool) {
	policy := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].RestartPolicy
	ran, attempt := launcherRan(kids.launcherPods), math.MaxInt
	if kids.launcher != nil {
		attempt = attemptWorkers(kids.launcher)
	}
	recorded, recordedOK := jobrecord.HostfileWorkers(job)
	listed := func(i int) bool { return !recordedOK || recorded.Contains(i) }
	var first *corev1.Pod
	var firstAt time.Time
	var firstOwn bool
	for i := range int(job.Workers()) {
		p := kids.workers[i]
		if p == nil {
			if ran && i < attempt && listed(i) {
				// When it went is not known: the attempt's start stands
				// for it, and nothing can come earlier.
				return goneWorker(job, i), since, false
			}
			continue
		}
		at, ok := disruptedAt(p)
		if !ok && isTerminating(p) && !isPodFinished(p) && listed(i) {
			// Deleted, by a drain without eviction or by hand: not the
			// program's failure either.
			at, ok = deletionRequested(p), true
		}
		own := !ok && policy == kubeflow.RestartPolicyExitCode && isOwnFailure(p)
		if own {
			at, ok = lastTermination(p), true
		}
		if ok && at.After(since) && (first == nil || at.Before(firstAt)) {
			first, firstAt, firstOwn = p, at, own
		}
	}
	return first, firstAt, firstOwn
}

// isOwnFailure reports whether a worker failed with a retryable exit code
// (128 or more: killed by a signal, OOMKilled among them) that the
// cluster did not cause: under ExitCode it restarts the job, and spends a
// retry.
func isOwnFailure(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && isRetryableExit(p) && !isDisrupted(p)
}

// reasonGone describes a worker whose Pod went unseen.
const reasonGone = "Pod gone before the operator saw it stop"

// goneWorker stands for worker i, whose Pod is gone.
func goneWorker(job *kubeflow.MPIJob, i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: builder.WorkerName(job, i), Namespace: job.Namespace},
		Status:     corev1.PodStatus{Phase: corev1.PodFailed, Reason: reasonGone},
	}
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

// launcherRan reports whether a launcher Pod's own container started: its
// init container waits until every host of the hostfile resolves, so the
// workers of the attempt all had Pods then.
func launcherRan(pods []*corev1.Pod) bool {
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded {
			return true
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil {
				return true
			}
		}
	}
	return false
}
