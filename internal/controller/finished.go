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
// takes the children). Its status no longer changes.
func (r *Reconciler) reconcileFinished(ctx context.Context, s *state) error {
	if expired, err := r.expireTTL(ctx, s); expired || err != nil {
		return err
	}
	kids, err := r.observe(ctx, s.job)
	if err != nil {
		return err
	}
	return r.cleanupPods(ctx, s.job, kids)
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
// read.
func (r *Reconciler) cleanupPods(ctx context.Context, job *kubeflow.MPIJob, kids *children) error {
	var match func(*corev1.Pod) bool
	switch *job.Spec.RunPolicy.CleanPodPolicy {
	case kubeflow.CleanPodPolicyRunning:
		match = func(p *corev1.Pod) bool { return !isPodFinished(p) }
	case kubeflow.CleanPodPolicyAll:
		match = func(*corev1.Pod) bool { return true }
	default:
		return nil
	}
	return errors.Join(r.deletePods(ctx, job, kids.workerPods(match)), r.deleteGroups(ctx, job))
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
