package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// removeWorkersGate removes builder.WorkersGate and no other gate: Kueue
// and others add gates of their own.
var removeWorkersGate = client.RawPatch(types.StrategicMergePatchType,
	fmt.Appendf(nil, `{"spec":{"schedulingGates":[{"$patch":"delete","name":%q}]}}`, builder.WorkersGate))

// ungateLauncher removes builder.WorkersGate from the launcher's Pods once
// the cache shows every worker. Each Pod the Job controller makes from the
// gated template (a retry) is let go the same way.
func (r *Reconciler) ungateLauncher(ctx context.Context, job *kubeflow.MPIJob, kids *children) error {
	if !kids.allWorkers(int(job.Workers()), exists) {
		return nil
	}
	var errs []error
	for _, p := range kids.launcherPods {
		if !builder.GatedOnWorkers(p) || isTerminating(p) {
			continue
		}
		if uid, ok := r.mem.ungated.Load(jobKey(job)); ok && uid == p.UID {
			continue // removed; the cache has not shown it yet
		}
		// The cache's Pod is shared, and a patch writes its answer into
		// the object it is given.
		if err := r.Client.Patch(ctx, p.DeepCopy(), removeWorkersGate); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("removing the workers gate of launcher Pod %s: %w", p.Name, err))
			continue
		}
		r.mem.ungated.Store(jobKey(job), p.UID)
	}
	return errors.Join(errs...)
}

// ungateWhileWaiting lets a first launcher's Pod go while the reconcile
// waits for the cache to show its status write (writtenOver). The write
// that made the workers (Created) goes out after their creates, and the
// cache shows it tens of milliseconds later: on the benchmark cluster the
// gate patch trailed it by 26-105 ms, as long as the launcher then needs
// to be scheduled, and a 10-worker job's launcher was its last Pod to run.
//
// The cached status is the one that write replaced, so this decides only
// from what is current: the write was of a starting job (not finished, not
// suspended; statusWrite.starting), the job's spec (not suspended), and the
// Pods, which the cache shows as this controller last wrote them
// (expectations). It covers only a job's first attempt with every worker
// made and none stopping or ended; anything else (a restart, a worker
// lost, a gang to form) waits for the full reconcile.
func (r *Reconciler) ungateWhileWaiting(ctx context.Context, job *kubeflow.MPIJob, w statusWrite) error {
	if !w.starting || r.Gang != nil || job.IsSuspended() || !r.Expectations.Satisfied(jobKey(job)) {
		return nil
	}
	kubeflow.SetDefaults(job)
	kids, err := r.observe(ctx, job)
	if err != nil {
		return err
	}
	if _, restarting := kids.restart(); restarting || kids.launcher == nil || kids.replaced != nil || len(kids.formerLaunchers) > 0 {
		return nil
	}
	if !kids.allWorkers(int(job.Workers()), live) {
		return nil
	}
	return r.ungateLauncher(ctx, job, kids)
}

// live reports whether a worker Pod neither stops nor has ended.
func live(p *corev1.Pod) bool {
	return !isTerminating(p) && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded
}
