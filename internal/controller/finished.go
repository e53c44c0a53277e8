package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// reconcileFinished looks after a job that has Succeeded or Failed: its
// worker Pods are cleaned up by cleanPodPolicy, and after
// ttlSecondsAfterFinished the MPIJob itself is deleted (garbage collection
// takes the children). Of its status only the Active counts still change,
// as its Pods stop.
func (r *Reconciler) reconcileFinished(ctx context.Context, s *state) error {
	if expired, err := r.expireTTL(ctx, s); expired || err != nil {
		return err
	}
	kids, err := r.observe(ctx, s.job)
	if err != nil {
		return err
	}
	return errors.Join(r.releaseStranded(ctx, s, kids), r.cleanupPods(ctx, s, kids), r.publishEndpoints(ctx, s, kids, false))
}

// succeed ends a job whose launcher succeeded: mpirun's exit 0 is the
// program's outcome, so no deadline, lost or failed worker, or restart
// changes it, and nothing more is made. The outcome is written first and
// the workers cleaned up by the next reconcile, so that deleting them (a
// second for 20 workers on a busy node, measured) does not hold it back.
func (r *Reconciler) succeed(ctx context.Context, s *state, kids *children) error {
	updateReplicaStatuses(s, kids)
	updateProgress(s, kids)
	if !isTrue(&s.job.Status, kubeflow.JobSucceeded) {
		// The write counts as active only what cleanup will leave.
		settleActive(s, kids, cleanedBy(*s.job.Spec.RunPolicy.CleanPodPolicy))
		s.requeueAfter(time.Millisecond)
		return nil
	}
	return r.cleanupPods(ctx, s, kids)
}

// requeueForTTL asks for a reconcile when a finished job's TTL runs out.
// The reconcile that finishes a job only asks: the job is deleted by a
// later one, so its outcome is always written first.
func requeueForTTL(s *state) {
	if ttl := s.job.Spec.RunPolicy.TTLSecondsAfterFinished; ttl != nil && s.status.CompletionTime != nil {
		s.requeueAfter(max(ttlLeft(s, *ttl), time.Millisecond))
	}
}

func ttlLeft(s *state, ttl int32) time.Duration {
	return s.status.CompletionTime.Add(time.Duration(ttl) * time.Second).Sub(s.now.Time)
}

// cleanupPods deletes the worker Pods that cleanPodPolicy names: Running
// (Pods still pending or running) or All, and then, as upstream, the gang's
// group objects. The launcher Job is kept, so its logs and outcome can be
// read. The status then counts none of the deleted Pods as active.
func (r *Reconciler) cleanupPods(ctx context.Context, s *state, kids *children) error {
	match := cleanedBy(*s.job.Spec.RunPolicy.CleanPodPolicy)
	var err error
	if match != nil {
		err = errors.Join(r.deletePods(ctx, s.job, kids.workerPods(match)), r.deleteGroups(ctx, s.job))
	}
	if err == nil {
		settleActive(s, kids, match)
	}
	return err
}

// cleanedBy is what a finished job's cleanPodPolicy deletes; nil for None.
func cleanedBy(policy kubeflow.CleanPodPolicy) func(*corev1.Pod) bool {
	switch policy {
	case kubeflow.CleanPodPolicyRunning:
		return func(p *corev1.Pod) bool { return !isPodFinished(p) }
	case kubeflow.CleanPodPolicyAll:
		return func(*corev1.Pod) bool { return true }
	}
	return nil
}

// expireTTL deletes the MPIJob once ttlSecondsAfterFinished passed since
// completionTime, and otherwise asks to be called back then.
func (r *Reconciler) expireTTL(ctx context.Context, s *state) (bool, error) {
	ttl := s.job.Spec.RunPolicy.TTLSecondsAfterFinished
	if ttl == nil || s.status.CompletionTime == nil {
		return false, nil
	}
	if left := ttlLeft(s, *ttl); left > 0 {
		s.requeueAfter(left)
		return false, nil
	}
	ctrl.LoggerFrom(ctx).Info("Deleting MPIJob: ttlSecondsAfterFinished passed", "mpijob", klog.KObj(s.job))
	err := r.Client.Delete(ctx, s.job,
		client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &s.job.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("deleting MPIJob after its TTL: %w", err)
	}
	return true, nil
}
