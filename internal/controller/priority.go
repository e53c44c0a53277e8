package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// A new leader's queue starts with every job, from its caches' initial
// lists. controller-runtime's priority queue puts the MPIJobs of those
// lists behind the events that follow (handler.LowPriority). The order
// among them is set here:
//   - a Pod of the initial list brings its job at the same low priority,
//     not ahead of the rest: every job with Pods is in the lists anyway;
//   - a job that no controller has reconciled yet (no condition) comes
//     first, as its Create event would have brought it: it has no children
//     at all, and nothing else will bring it.
// Before, the Pods' initial Create events came at normal priority, so a
// job not yet reconciled waited behind every job with Pods, and then
// behind every new Pod event: under leader kills a few seconds apart it
// waited more than a minute for its first status (make chaos, -race).

// addLow adds req to q with handler.LowPriority when q is a priority
// queue; else as Add.
func addLow(q queue, req reconcile.Request) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: new(handler.LowPriority)}, req)
		return
	}
	q.Add(req)
}

// newJobHandler enqueues, at normal priority, each MPIJob of the initial
// list that has no condition yet; the For watch brings every other
// event. It is not a handler.Funcs, which would lower the initial
// list's priority.
type newJobHandler struct{}

func (newJobHandler) Create(_ context.Context, e event.TypedCreateEvent[client.Object], q queue) {
	job, ok := e.Object.(*kubeflow.MPIJob)
	if !ok || !e.IsInInitialList || len(job.Status.Conditions) > 0 || !job.IsManagedByUs() {
		return
	}
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: job.Namespace, Name: job.Name}})
}

func (newJobHandler) Update(context.Context, event.TypedUpdateEvent[client.Object], queue)   {}
func (newJobHandler) Delete(context.Context, event.TypedDeleteEvent[client.Object], queue)   {}
func (newJobHandler) Generic(context.Context, event.TypedGenericEvent[client.Object], queue) {}

var _ handler.EventHandler = newJobHandler{}
