package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// reconcileWorkers creates the missing workers of indices 0..n-1 and deletes
// the workers beyond n (after a scale down).
func (r *Reconciler) reconcileWorkers(ctx context.Context, job *kubeflow.MPIJob, kids *children) error {
	var missing []int
	for i := range int(job.Workers()) {
		if kids.workers[i] == nil {
			missing = append(missing, i)
		}
	}
	return errors.Join(r.createWorkers(ctx, job, missing), r.deletePods(ctx, job, kids.surplus))
}

// createWorkers creates the given workers in parallel, the creates in
// flight doubling each round trip (16, 32, 64, ...) up to
// CreateParallelism: a job that cannot create Pods (quota, admission)
// fails after 16 requests instead of a thousand.
func (r *Reconciler) createWorkers(ctx context.Context, job *kubeflow.MPIJob, indices []int) error {
	if len(indices) == 0 {
		return nil
	}
	key := jobKey(job)
	names := make([]string, len(indices))
	for i, idx := range indices {
		names[i] = builder.WorkerName(job, idx)
	}
	r.Expectations.ExpectCreations(key, names...)
	avoid := r.avoidedNodes(job)
	done, err := slowStart(len(indices), r.CreateParallelism, func(i int) error {
		pod := r.workerPod(job, indices[i], avoid)
		if err := r.create(ctx, job, pod); err != nil {
			// The informer will not report this Pod as new: lower the
			// expectation now.
			r.Expectations.CreationObserved(key, pod.Name)
			return err
		}
		r.Expectations.Created(key, pod.ResourceVersion)
		return nil
	})
	for _, name := range names[done:] {
		r.Expectations.CreationObserved(key, name)
	}
	return r.warnIfRefused(job, "worker Pods", err)
}

// ReasonFailedCreate is the reason of the Warning event that tells the
// user a child could not be made (a quota, an admission webhook): without
// it the job would sit in Created with the cause in the operator's log
// only.
const ReasonFailedCreate = "FailedCreate"

// warnIfRefused emits a Warning event for a failed create, and returns
// err. Unlike transition events it needs no status write first: it
// reports a request the API server already answered.
func (r *Reconciler) warnIfRefused(job *kubeflow.MPIJob, what string, err error) error {
	if err != nil && r.Recorder != nil {
		msg := err.Error()
		if len(msg) > 1000 {
			msg = msg[:1000]
		}
		r.Recorder.Eventf(job, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Create", "creating %s: %s", what, msg)
	}
	return err
}

// firstBatch is how many calls slowStart makes at once before any has
// returned. The Job controller starts at 1; each step is a round trip,
// and at 1 a job of 10 workers took four of them (1, 2, 4, 3), 80 ms on the
// benchmark cluster where the bare Pods were all Running in 100 ms. A job
// of up to 16 workers now goes out in one.
const firstBatch = 16

// slowStart calls fn for 0..count-1, in order, with at most firstBatch
// calls in flight plus one for each that succeeded, and never more than
// limit: the calls in flight double each round trip, as batches of 16,
// 32, 64 would, but a slow call holds back only its own slot, not the
// next batch. After the first error no call is started; those in flight
// finish. It returns how many calls were made: a job whose Pods are all
// refused (a quota) makes firstBatch requests, not a thousand.
func slowStart(count, limit int, fn func(int) error) (int, error) {
	limit = max(limit, 1)
	results := make(chan error)
	started, inFlight, succeeded := 0, 0, 0
	var errs []error
	for {
		for len(errs) == 0 && started < count && inFlight < min(limit, firstBatch+succeeded) {
			go func(i int) { results <- fn(i) }(started)
			started++
			inFlight++
		}
		if inFlight == 0 {
			return started, errors.Join(errs...)
		}
		if err := <-results; err != nil {
			errs = append(errs, err)
		} else {
			succeeded++
		}
		inFlight--
	}
}

// deletePods deletes the given Pods in parallel; Pods already terminating
// are left to finish.
func (r *Reconciler) deletePods(ctx context.Context, job *kubeflow.MPIJob, pods []*corev1.Pod) error {
	var doomed []*corev1.Pod
	for _, p := range pods {
		if !isTerminating(p) {
			doomed = append(doomed, p)
		}
	}
	if len(doomed) == 0 {
		return nil
	}
	key := jobKey(job)
	for _, p := range doomed {
		r.Expectations.ExpectDeletions(key, p.Name)
	}
	done, err := slowStart(len(doomed), r.CreateParallelism, func(i int) error {
		p := doomed[i]
		err := r.deletePod(ctx, p)
		if err != nil {
			r.Expectations.DeletionObserved(key, p.Name)
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				return nil
			}
			return fmt.Errorf("deleting Pod %s: %w", p.Name, err)
		}
		return nil
	})
	// The batches stop at the first error: no event will ever report the
	// Pods never tried, so their expectations go now, or every reconcile
	// of the job would wait for them until the expectations time out.
	for _, p := range doomed[done:] {
		r.Expectations.DeletionObserved(key, p.Name)
	}
	return err
}

// workerPods returns the job's worker Pods (surplus included) that match.
func (k *children) workerPods(match func(*corev1.Pod) bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range k.workers {
		if match(p) {
			out = append(out, p)
		}
	}
	for _, p := range k.surplus {
		if match(p) {
			out = append(out, p)
		}
	}
	return out
}
