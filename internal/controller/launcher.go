package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// reconcileLauncher creates the launcher Job when it may run, and
// suspends or resumes an existing one.
func (r *Reconciler) reconcileLauncher(ctx context.Context, s *state, kids *children) error {
	job := s.job
	suspend := launcherMustWait(s, kids)
	if kids.launcher == nil {
		if rec, ok := kids.restart(); ok {
			// After a restart the successor is made at once, suspended
			// if it must wait, as it alone carries the retries left.
			l := r.newLauncherJob(ctx, job, kids, suspend)
			l.Name = builder.LauncherJobName(job, rec.Count)
			l.Spec.BackoffLimit = ptr.To(rec.BackoffLimit)
			return r.warnIfRefused(job, "launcher Job", r.create(ctx, job, l))
		}
		if suspend {
			// Made only when it can run: a launcher made earlier would
			// hold a stale copy of the template that Kueue may still edit.
			return nil
		}
		l := r.newLauncherJob(ctx, job, kids, false)
		if s.gateLauncher {
			builder.GateOnWorkers(l)
		}
		return r.warnIfRefused(job, "launcher Job", r.create(ctx, job, l))
	}
	return r.setLauncherSuspend(ctx, job, kids.launcher, suspend)
}

// startAttempt makes the missing workers and the launcher Job.
//
// The launcher must not run before every worker has been made: a worker
// missing once the launcher has started is one that was lost. (When the
// launcher Job was made after the workers' creates were sent but not all
// done, a leader killed between the two left a started launcher and
// workers never made, which the next leader took for lost ones: make
// chaos seed 932738 restarted 186 times for 95 disruptions.) So on a
// restart, or while an earlier launcher is about, the workers come first.
// A job's first launcher Job is made beside its workers instead, in the
// same round trip, with its Pod template gated (builder.WorkersGate): the
// Job controller's turn to make the Pod then overlaps the workers', and
// ungateLauncher lets the Pod be scheduled once the cache shows them all.
func (r *Reconciler) startAttempt(ctx context.Context, s *state, kids *children) error {
	_, restarting := kids.restart()
	if kids.launcher != nil || kids.replaced != nil || restarting || len(kids.formerLaunchers) > 0 {
		if err := r.reconcileWorkers(ctx, s.job, kids); err != nil {
			return err
		}
		return errors.Join(r.reconcileLauncher(ctx, s, kids), r.ungateLauncher(ctx, s.job, kids))
	}
	s.gateLauncher = !kids.allWorkers(int(s.job.Workers()), exists)
	return concurrently(
		func() error { return r.reconcileWorkers(ctx, s.job, kids) },
		func() error { return r.reconcileLauncher(ctx, s, kids) })
}

func exists(*corev1.Pod) bool { return true }

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

// newLauncherJob is the launcher Job to create. It checks the workers'
// host keys unless a worker that an older operator made still runs: that
// one may present its image's own key, and the job must keep working.
func (r *Reconciler) newLauncherJob(ctx context.Context, job *kubeflow.MPIJob, kids *children, suspend bool) *batchv1.Job {
	l := r.launcherJob(job, suspend)
	for _, p := range kids.workers {
		if !builder.PresentsJobHostKey(p) {
			ctrl.LoggerFrom(ctx).Info("Not checking host keys: a worker was made by an older operator",
				"mpijob", klog.KObj(job), "pod", p.Name)
			builder.SkipHostKeyCheck(l)
			break
		}
	}
	return l
}

// launcherMustWait decides whether the launcher Job is suspended: the job
// is suspended; or the launcher has not started yet in this attempt and
// either the job waits for its workers or the previous attempt has not
// stopped. Resuming a job whose launcher already exists goes through the
// same wait (kubeflow/mpi-operator#868 does not).
func launcherMustWait(s *state, kids *children) bool {
	job := s.job
	if job.IsSuspended() {
		return true
	}
	if l := kids.launcher; l != nil && !ptr.Deref(l.Spec.Suspend, false) && l.Status.StartTime != nil {
		return false // started: a worker turning unready must not stop it
	}
	if previousAttemptStopping(s, kids) {
		return true
	}
	if job.Spec.LauncherCreationPolicy != kubeflow.LauncherCreationPolicyWaitForWorkersReady {
		return false
	}
	return !kids.allWorkers(int(job.Workers()), isPodReady)
}

// formerLauncherGrace is how long past its deletion deadline a former
// launcher Pod still holds back the next attempt. A Pod whose node is gone
// may never report that it stopped; its processes cannot reach the
// workers either.
const formerLauncherGrace = 30 * time.Second

// previousAttemptStopping reports whether a Pod of the previous attempt is
// still stopping. A worker being deleted holds its name until it is gone,
// so its replacement cannot be made; and where kube-controller-manager
// publishes the job's addresses (a Service upstream's operator made, with
// publishNotReadyAddresses) its address stays in DNS until then, and a new
// launcher would run mpirun against the dying Pod (the operator's own
// EndpointSlices drop it at once: builder.EndpointSlices). A former
// launcher Pod still running would run a second mpirun beside the new one.
func previousAttemptStopping(s *state, kids *children) bool {
	for i := range int(s.job.Workers()) {
		if p := kids.workers[i]; p != nil && isTerminating(p) {
			return true
		}
	}
	for _, p := range kids.formerLaunchers {
		if !isTerminating(p) {
			return true
		}
		if left := p.DeletionTimestamp.Add(formerLauncherGrace).Sub(s.now.Time); left > 0 {
			s.requeueAfter(left)
			return true
		}
	}
	return false
}

// setLauncherSuspend flips the launcher Job's suspend flag. On resume it
// first copies the template's current scheduling directives, which Kueue
// may have changed while the job was suspended; Kubernetes allows that
// while the Job is suspended and has not started.
func (r *Reconciler) setLauncherSuspend(ctx context.Context, job *kubeflow.MPIJob, launcher *batchv1.Job, suspend bool) error {
	if ptr.Deref(launcher.Spec.Suspend, false) == suspend || isJobFinished(launcher) {
		return nil
	}
	upd := launcher.DeepCopy()
	upd.Spec.Suspend = ptr.To(suspend)
	if !suspend {
		copySchedulingDirectives(&upd.Spec.Template, &r.launcherJob(job, false).Spec.Template)
	}
	if err := r.Client.Update(ctx, upd); err != nil {
		return fmt.Errorf("setting suspend=%t on launcher Job: %w", suspend, err)
	}
	return nil
}

func copySchedulingDirectives(dst, src *corev1.PodTemplateSpec) {
	labels := maps.Clone(src.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for _, k := range builder.JobControllerLabels {
		if v, ok := dst.Labels[k]; ok {
			labels[k] = v
		}
	}
	dst.Labels = labels
	dst.Annotations = src.Annotations
	dst.Spec.NodeSelector = src.Spec.NodeSelector
	dst.Spec.Tolerations = src.Spec.Tolerations
	dst.Spec.SchedulingGates = src.Spec.SchedulingGates
	dst.Spec.Affinity = src.Spec.Affinity
}

// jobCondition returns the Job's condition of the given type if it is True.
func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

func isJobFinished(job *batchv1.Job) bool {
	return jobCondition(job, batchv1.JobComplete) != nil || jobCondition(job, batchv1.JobFailed) != nil
}

// isJobFinishing reports whether the Job controller is about to write the
// launcher Job's outcome: a Pod has terminated and is not counted yet, or
// the success or failure criteria are met and the Pods are winding down.
// Its counts move in several writes then, a second or more apart.
func isJobFinishing(job *batchv1.Job) bool {
	if isJobFinished(job) {
		return false
	}
	if u := job.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		return true
	}
	return jobCondition(job, batchv1.JobSuccessCriteriaMet) != nil || jobCondition(job, batchv1.JobFailureTarget) != nil
}
