package controller

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// suspend brings a suspended job to rest: no worker Pods, the launcher Job
// suspended (which ends its Pod), status Suspended.
func (r *Reconciler) suspend(ctx context.Context, s *state, kids *children) error {
	err := errors.Join(
		r.deletePods(ctx, s.job, kids.workerPods(func(*corev1.Pod) bool { return true })),
		r.suspendLauncher(ctx, s.job, kids),
		r.deleteGroups(ctx, s.job),
	)
	updateReplicaStatuses(s, kids)
	markSuspended(s)
	return err
}

func (r *Reconciler) suspendLauncher(ctx context.Context, job *kubeflow.MPIJob, kids *children) error {
	if kids.launcher == nil {
		return nil
	}
	return r.setLauncherSuspend(ctx, job, kids.launcher, true)
}
