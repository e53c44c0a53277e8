package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/gang"
)

// Gang scheduling (--gang-scheduling): the group objects of all three
// schedulers, and the PriorityClasses whose values order the roles in
// Volcano's and scheduler-plugins' minResources. update is used on
// Volcano and scheduler-plugins PodGroups (their spec follows the job)
// and on the Workload API's objects only for labels (their spec is
// immutable); patch adopts the PodGroups upstream's operator made.
// +kubebuilder:rbac:groups=scheduling.volcano.sh,resources=podgroups,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=scheduling.x-k8s.io,resources=podgroups,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=workloads;podgroups,verbs=get;list;watch;create;update;patch;delete
// PriorityClasses are read from the cache only.
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=list;watch

// reconcileGang makes the job's group objects, before its Pods exist, and
// keeps them as the job wants them (a scale changes the gang's size). It
// reports false while a group object of an earlier attempt is still being
// deleted (Kubernetes' PodGroup waits for the Pods that name it): Pods
// made now would join a group about to vanish. Its deletion brings the job
// back here.
func (r *Reconciler) reconcileGang(ctx context.Context, job *kubeflow.MPIJob) (bool, error) {
	if r.Gang == nil {
		return true, nil
	}
	for _, want := range r.Gang.Groups(job, r.priorities(ctx)) {
		have, ok := want.DeepCopyObject().(client.Object)
		if !ok {
			return false, fmt.Errorf("copying %T", want)
		}
		found, err := r.getOwned(ctx, job, want.GetName(), have)
		switch {
		case err != nil:
			return false, err
		case !found:
			if err := r.create(ctx, job, want); err != nil {
				return false, err
			}
		case have.GetDeletionTimestamp() != nil:
			ctrl.LoggerFrom(ctx).V(2).Info("Waiting for the gang's old group object to be deleted",
				"mpijob", klog.KObj(job), "kind", fmt.Sprintf("%T", have))
			return false, nil
		case r.Gang.Merge(have, want):
			if err := r.Client.Update(ctx, have); err != nil {
				return false, fmt.Errorf("updating %T %s: %w", have, have.GetName(), err)
			}
		}
	}
	return true, nil
}

// deleteGroups deletes the job's group objects, as upstream does when the
// job is suspended and when a finished job's Pods are cleaned up: a
// suspended job must not hold a place in the scheduler's queue.
func (r *Reconciler) deleteGroups(ctx context.Context, job *kubeflow.MPIJob) error {
	var errs []error
	kinds := slices.Clone(gang.Kinds(r.Gang))
	slices.Reverse(kinds)
	for _, kind := range kinds {
		have, ok := kind.DeepCopyObject().(client.Object)
		if !ok {
			return fmt.Errorf("copying %T", kind)
		}
		found, err := r.getOwned(ctx, job, gang.GroupName(job), have)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if found && have.GetDeletionTimestamp() == nil {
			errs = append(errs, r.deleteGroup(ctx, have))
		}
	}
	return errors.Join(errs...)
}

func (r *Reconciler) deleteGroup(ctx context.Context, obj client.Object) error {
	uid := obj.GetUID()
	err := r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// priorities reads PriorityClass values from the cache. A class that
// cannot be read counts as absent (value 0), as upstream treats it.
func (r *Reconciler) priorities(ctx context.Context) gang.Priorities {
	return func(name string) (int32, bool) {
		pc := &schedulingv1.PriorityClass{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, pc); err != nil {
			ctrl.LoggerFrom(ctx).V(2).Info("PriorityClass not read; its value counts as 0", "priorityClass", name, "err", err)
			return 0, false
		}
		return pc.Value, true
	}
}

// workerPod is the worker Pod the builder makes, in the job's gang.
func (r *Reconciler) workerPod(job *kubeflow.MPIJob, i int, avoid []string) *corev1.Pod {
	pod := builder.WorkerPod(job, i, r.Options)
	builder.AvoidNodes(&pod.Spec, avoid)
	if r.Gang != nil {
		tmpl := corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec}
		r.Gang.Decorate(&tmpl, job)
		pod.Labels, pod.Annotations, pod.Spec = tmpl.Labels, tmpl.Annotations, tmpl.Spec
	}
	return pod
}

// launcherJob is the launcher Job the builder makes, its Pod in the job's
// gang.
func (r *Reconciler) launcherJob(job *kubeflow.MPIJob, suspend bool) *batchv1.Job {
	l := builder.LauncherJob(job, suspend, r.Options)
	builder.AvoidNodes(&l.Spec.Template.Spec, r.avoidedNodes(job))
	recordWorkers(l, job.Workers())
	if r.Gang != nil {
		r.Gang.Decorate(&l.Spec.Template, job)
	}
	return l
}
