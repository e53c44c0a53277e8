package controller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// A new leader's queue: a job no controller has reconciled yet comes
// before the jobs whose Pods are in the initial lists, though it was
// listed last. It came last when the Pods' initial events came at normal
// priority (make chaos with -race: a job waited over a minute for its
// first status under back-to-back leader kills).
func TestNewLeaderReconcilesAJobNeverReconciledFirst(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	forJobs := handler.WithLowPriorityWhenUnchanged(&handler.EnqueueRequestForObject{}) // as For watches
	pods := &podHandler{expectations: NewExpectations(clock.RealClock{}), cool: &cooldown{}, clock: clock.RealClock{}}
	ctx := context.Background()

	for _, name := range []string{"running-a", "running-b"} {
		job := testjob.MakeMPIJob(name, "ns").Obj()
		job.Status.Conditions = []kubeflow.JobCondition{{Type: kubeflow.JobRunning, Status: corev1.ConditionTrue}}
		forJobs.Create(ctx, event.TypedCreateEvent[client.Object]{Object: job, IsInInitialList: true}, q)
		newJobHandler{}.Create(ctx, event.TypedCreateEvent[client.Object]{Object: job, IsInInitialList: true}, q)
		for i := range 3 {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-worker-" + string(rune('0'+i)), Namespace: "ns",
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, kubeflow.GroupVersion.WithKind(kubeflow.Kind))}}}
			pods.Create(ctx, event.TypedCreateEvent[client.Object]{Object: pod, IsInInitialList: true}, q)
		}
	}
	fresh := testjob.MakeMPIJob("never-reconciled", "ns").Obj()
	forJobs.Create(ctx, event.TypedCreateEvent[client.Object]{Object: fresh, IsInInitialList: true}, q)
	newJobHandler{}.Create(ctx, event.TypedCreateEvent[client.Object]{Object: fresh, IsInInitialList: true}, q)

	first, _ := q.Get()
	if first.Name != "never-reconciled" {
		t.Errorf("the new leader reconciles %s first, want the job never reconciled", first.Name)
	}
}
