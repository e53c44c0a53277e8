package controller

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/gang"
)

// CacheOptions restricts the manager's cache to the objects this operator
// made: Pods (workers, and launchers through the Job's template), Jobs,
// Services, ConfigMaps, Secrets and EndpointSlices carrying our operator
// label. Memory then does not grow with the rest of the cluster. managedFields are
// dropped, as nothing here reads them. namespaces limits the scope; empty
// means all. groups are the gang scheduler's kinds (gang.Kinds), also
// held only when labelled as ours. pods, when set, keeps the Pod stores
// for the expectations (PodStores).
func CacheOptions(namespaces []string, pods *PodStores, groups ...client.Object) cache.Options {
	ours := labels.SelectorFromSet(labels.Set{kubeflow.LabelOperatorName: kubeflow.OperatorName})
	opts := cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:       {Label: ours},
			&batchv1.Job{}:      {Label: ours},
			&corev1.Service{}:   {Label: ours},
			&corev1.ConfigMap{}: {Label: ours},
			&corev1.Secret{}:    {Label: ours},
			// The slices this operator writes carry our label; those
			// kube-controller-manager writes for a Service that selects
			// (upstream's) do not, and are none of ours.
			&discoveryv1.EndpointSlice{}: {Label: ours},
		},
	}
	for _, g := range groups {
		opts.ByObject[g] = cache.ByObject{Label: ours}
	}
	if pods != nil {
		opts.NewInformer = pods.NewInformer
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// SetupOptions tune the controller's work queue.
type SetupOptions struct {
	// Concurrency is how many MPIJobs are reconciled at once.
	Concurrency int
	// QueueQPS and QueueBurst bound, over all jobs, how fast failed
	// reconciles are retried (upstream's --controller-queue-rate-limit
	// and --controller-queue-burst); zero means controller-runtime's
	// defaults.
	QueueQPS   float64
	QueueBurst int
}

// rateLimiter is controller-runtime's default limiter with the overall
// bucket sized by the options: per job, retries back off from 5 ms to
// 1000 s.
func (o SetupOptions) rateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	qps, burst := o.QueueQPS, o.QueueBurst
	if qps <= 0 {
		qps = 10
	}
	if burst <= 0 {
		burst = 100
	}
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, 1000*time.Second),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(qps), burst)},
	)
}

// SetupWithManager registers the controller: MPIJobs managed by us, their
// launcher Jobs and worker Pods, and the deletion of their other children
// (which the controller then makes again).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, o SetupOptions) error {
	onlyDeletes := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	managedByUs := predicate.NewPredicateFuncs(func(o client.Object) bool {
		job, ok := o.(*kubeflow.MPIJob)
		return ok && job.IsManagedByUs()
	})
	// A restart recorded on the job is carried out once the cache shows
	// the record (durable.go), so its arrival must bring a reconcile.
	restartRecorded := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetAnnotations()[AnnotationRestart] != e.ObjectNew.GetAnnotations()[AnnotationRestart]
	}}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("mpijob").
		For(&kubeflow.MPIJob{}, builder.WithPredicates(managedByUs, predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, restartRecorded, r.ownWriteSeen()))).
		Owns(&batchv1.Job{}).
		Owns(&corev1.Service{}, builder.WithPredicates(onlyDeletes)).
		Owns(&corev1.ConfigMap{}, builder.WithPredicates(onlyDeletes)).
		Owns(&corev1.Secret{}, builder.WithPredicates(onlyDeletes)).
		Owns(&discoveryv1.EndpointSlice{}, builder.WithPredicates(predicate.Or[client.Object](onlyDeletes, r.sliceWriteSeen()))).
		Watches(&corev1.Pod{}, &podHandler{expectations: r.Expectations, cool: &r.mem.cool, clock: r.Clock}).
		Watches(&kubeflow.MPIJob{}, newJobHandler{})
	// Gang objects are watched only when gang scheduling is on: their
	// kinds may not exist in the cluster otherwise.
	for _, kind := range gang.Kinds(r.Gang) {
		b = b.Owns(kind, builder.WithPredicates(onlyDeletes))
	}
	if err := b.WithOptions(controller.Options{MaxConcurrentReconciles: o.Concurrency, RateLimiter: o.rateLimiter()}).Complete(r); err != nil {
		return err
	}
	return warmInformers(mgr.GetCache(), &kubeflow.MPIJob{}, &batchv1.Job{}, &corev1.Service{}, &corev1.ConfigMap{},
		&corev1.Secret{}, &discoveryv1.EndpointSlice{}, &corev1.Pod{})
}

// warmInformers asks the cache, before the manager starts, for the
// informers of the kinds the controller watches. Otherwise the controller
// makes them only once it starts, after it is elected, and lists every
// kind then: the first job after a start, or after a takeover, waited for
// those lists. Made now, they start and sync with the cache on every
// replica, standbys too, and the manager counts its caches synced (and the
// operator ready) only once they are.
func warmInformers(c cache.Informers, kinds ...client.Object) error {
	for _, k := range kinds {
		// The cache has not started, so asking does not wait for a sync.
		if _, err := c.GetInformer(context.Background(), k); err != nil {
			return fmt.Errorf("the cache's informer for %T: %w", k, err)
		}
	}
	return nil
}

// ownWriteSeen passes the update that brings this controller's last status
// write into the cache: a reconcile that found the cache behind it waits
// (writtenOver), and the write's arrival ends the wait rather than the
// next Pod event or conflictRetry.
func (r *Reconciler) ownWriteSeen() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		_, waiting := r.mem.writtenOver.Load(keyOf(e.ObjectNew.GetNamespace(), e.ObjectNew.GetName()))
		return waiting
	}}
}

// sliceWriteSeen passes the EndpointSlice events that bring this
// controller's last slice writes into the cache while a reconcile waits
// for them (slicesBehind).
func (r *Reconciler) sliceWriteSeen() predicate.Funcs {
	waiting := func(o client.Object) bool {
		ref := metav1.GetControllerOf(o)
		if ref == nil {
			return false
		}
		_, ok := r.mem.slicesWritten.Load(keyOf(o.GetNamespace(), ref.Name))
		return ok
	}
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return waiting(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return waiting(e.ObjectNew) },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// podHandler enqueues a worker Pod's MPIJob, once the job's cooldown is
// over, and tells the expectations what the cache now shows. A Pod that
// starts terminating counts as deleted: its name stays taken until it is
// gone, but the deletion was seen.
type podHandler struct {
	expectations *Expectations
	cool         *cooldown
	clock        clock.PassiveClock
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// enqueue adds req now, or once the job's cooldown is over; the queue
// keeps one entry per job, so the events meanwhile share a reconcile.
func (h *podHandler) enqueue(q queue, req reconcile.Request) {
	if d := h.cool.wait(req.String(), h.clock.Now()); d > 0 {
		q.AddAfter(req, d)
		return
	}
	q.Add(req)
}

func (h *podHandler) Create(_ context.Context, e event.TypedCreateEvent[client.Object], q queue) {
	if req, ok := ownerRequest(e.Object); ok {
		h.expectations.CreationObserved(req.String(), e.Object.GetName())
		if e.Object.GetDeletionTimestamp() != nil {
			h.expectations.DeletionObserved(req.String(), e.Object.GetName())
		}
		if e.IsInInitialList {
			addLow(q, req)
			return
		}
		h.enqueue(q, req)
	}
}

func (h *podHandler) Update(_ context.Context, e event.TypedUpdateEvent[client.Object], q queue) {
	if req, ok := ownerRequest(e.ObjectNew); ok {
		if e.ObjectNew.GetDeletionTimestamp() != nil {
			h.expectations.DeletionObserved(req.String(), e.ObjectNew.GetName())
		}
		h.enqueue(q, req)
	}
}

func (h *podHandler) Delete(_ context.Context, e event.TypedDeleteEvent[client.Object], q queue) {
	if req, ok := ownerRequest(e.Object); ok {
		h.expectations.DeletionObserved(req.String(), e.Object.GetName())
		h.enqueue(q, req)
	}
}

func (h *podHandler) Generic(_ context.Context, e event.TypedGenericEvent[client.Object], q queue) {
	if req, ok := ownerRequest(e.Object); ok {
		h.enqueue(q, req)
	}
}

// ownerRequest is the reconcile request of the MPIJob a Pod belongs to:
// its controller for a worker, and for a launcher Pod (controlled by the
// launcher Job) the job named by its label.
func ownerRequest(obj client.Object) (reconcile.Request, bool) {
	name := ""
	if ref := metav1.GetControllerOf(obj); ref != nil && ref.Kind == kubeflow.Kind && ref.APIVersion == kubeflow.GroupVersion.String() {
		name = ref.Name
	} else if obj.GetLabels()[kubeflow.LabelJobRole] == "launcher" && obj.GetLabels()[kubeflow.LabelOperatorName] == kubeflow.OperatorName {
		name = obj.GetLabels()[kubeflow.LabelJobName]
	}
	if name == "" {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}, true
}

var _ handler.EventHandler = &podHandler{}
