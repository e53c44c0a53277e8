package controller

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// enforceDeadline fails a job active longer than activeDeadlineSeconds,
// counted from startTime, so the wait for workers counts too. It reports
// whether the job ended.
func (r *Reconciler) enforceDeadline(ctx context.Context, s *state, kids *children) (bool, error) {
	d := s.job.Spec.RunPolicy.ActiveDeadlineSeconds
	// A deadline past what a Duration holds (292 years) never comes; as a
	// Duration it would wrap around to the past and fail the job at once.
	if d == nil || s.status.StartTime == nil || *d > int64(math.MaxInt64/time.Second) {
		return false, nil
	}
	left := s.status.StartTime.Add(time.Duration(*d) * time.Second).Sub(s.now.Time)
	if left > 0 {
		s.requeueAfter(left)
		return false, nil
	}
	r.markFailed(s, ReasonDeadlineExceeded, fmt.Sprintf("MPIJob %s/%s was active longer than activeDeadlineSeconds (%ds)", s.job.Namespace, s.job.Name, *d))
	return true, r.stopEverything(ctx, s.job, kids)
}

// handleWorkerFailures replaces workers that failed through no fault of
// the program (eviction, preemption, node loss) or with a retryable exit
// code under ExitCode (once restartOnDisruption has judged it: judged),
// and fails the job when a worker failed for good. It reports whether the
// job ended.
func (r *Reconciler) handleWorkerFailures(ctx context.Context, s *state, kids *children) (bool, error) {
	policy := s.job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker]
	var retry []int
	for i := range int(s.job.Workers()) {
		pod := kids.workers[i]
		if pod == nil || isTerminating(pod) || pod.Status.Phase != corev1.PodFailed {
			continue
		}
		if isDisrupted(pod) || (policy.RestartPolicy == kubeflow.RestartPolicyExitCode && isRetryableExit(pod)) {
			if !judged(kids, pod) {
				retry = append(retry, i)
			}
			continue
		}
		if err := r.recordFailure(ctx, s.job, pod); err != nil {
			return true, err
		}
		r.markFailed(s, ReasonWorkerFailed, fmt.Sprintf("worker Pod %s failed: %s", pod.Name, podFailure(pod)))
		return true, r.stopEverything(ctx, s.job, kids)
	}
	pods := make([]*corev1.Pod, len(retry))
	for n, i := range retry {
		pods[n] = kids.workers[i]
	}
	if err := r.deletePods(ctx, s.job, pods); err != nil {
		return false, err
	}
	// The replaced Pods are being deleted in this reconcile's view. The
	// cache's own objects are shared, and never written: each is replaced
	// by a copy.
	for _, i := range retry {
		p := kids.workers[i].DeepCopy()
		p.DeletionTimestamp = &s.now
		kids.workers[i] = p
	}
	return false, nil
}

// judged reports whether a worker's own failure is left for
// restartOnDisruption to judge: it failed while the current launcher ran.
// That step restarts the job, spending a retry, or fails it when none is
// left; the Pod is kept until then, for the failure to be read from it.
// Once the restart is recorded the launcher is the one it replaces, and
// the Pod is replaced.
func judged(kids *children, pod *corev1.Pod) bool {
	l := kids.launcher
	return isOwnFailure(pod) && l != nil && l.Status.StartTime != nil && lastTermination(pod).After(l.Status.StartTime.Time)
}

// stopEverything ends a job the controller itself failed: the launcher Job
// is deleted (with its Pod) and no worker keeps running.
func (r *Reconciler) stopEverything(ctx context.Context, job *kubeflow.MPIJob, kids *children) error {
	var err error
	if l := kids.launcher; l != nil && !isJobFinished(l) && l.DeletionTimestamp == nil {
		err = client.IgnoreNotFound(r.Client.Delete(ctx, l,
			client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &l.UID}))
		if err != nil {
			err = fmt.Errorf("deleting launcher Job: %w", err)
		}
	}
	return errors.Join(err, r.deletePods(ctx, job, kids.workerPods(func(p *corev1.Pod) bool { return !isPodFinished(p) })))
}

// isDisrupted reports whether the Pod failed because of the infrastructure.
func isDisrupted(pod *corev1.Pod) bool {
	if c := findPodCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue {
		return true
	}
	return pod.Status.Reason == "Evicted" || pod.Status.Reason == "Preempting" || pod.Status.Reason == "NodeLost"
}

func findPodCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// isRetryableExit reports whether every failed container exited with a
// code of 128 or more (killed by a signal), which ExitCode retries.
func isRetryableExit(pod *corev1.Pod) bool {
	found := false
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			if t.ExitCode < 128 {
				return false
			}
			found = true
		}
	}
	return found
}

func podFailure(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("container %s exited with code %d (%s)", cs.Name, t.ExitCode, t.Reason)
		}
	}
	if pod.Status.Reason != "" || pod.Status.Message != "" {
		return fmt.Sprintf("%s: %s", pod.Status.Reason, pod.Status.Message)
	}
	return "phase Failed"
}
