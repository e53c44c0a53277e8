package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestPodEventsOfALargeJobWaitForItsCooldown(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := &podHandler{expectations: NewExpectations(clk), cool: &cooldown{}, clock: clk}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	job := testjob.MakeMPIJob("big", "ns").Workers(1000).Obj()
	job.UID = "uid"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "big-worker-7", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, job.GroupVersionKind())},
		Labels:          builder.RoleLabels(job, builder.RoleWorker)}}
	update := func() {
		h.Update(context.Background(), event.TypedUpdateEvent[client.Object]{ObjectOld: pod, ObjectNew: pod}, q)
	}

	update() // no reconcile yet: at once
	if q.Len() != 1 {
		t.Fatalf("queue holds %d, want the job at once", q.Len())
	}
	req, _ := q.Get()
	q.Done(req)
	q.Forget(req)

	h.cool.done(req.String(), clk.Now(), 1000, false)
	clk.SetTime(clk.Now().Add(5 * time.Millisecond))
	update()
	update()
	if q.Len() != 0 {
		t.Fatalf("queue holds %d right after a reconcile of a 1000-worker job, want 0", q.Len())
	}
	if w := h.cool.wait(req.String(), clk.Now()); w != 95*time.Millisecond {
		t.Errorf("wait %v, want 95ms (0.1 ms per worker, 5 ms gone)", w)
	}
	clk.SetTime(clk.Now().Add(time.Second))
	update()
	if q.Len() != 1 {
		t.Errorf("queue holds %d once the cooldown is over, want 1", q.Len())
	}
}

// TestFinishedJobsPodEventsWaitLonger: once a job is finished its Pod
// events wait finishedCooldown, whatever its size; a running job of the
// same size waits its per-worker cooldown.
func TestFinishedJobsPodEventsWaitLonger(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		workers  int32
		finished bool
		want     time.Duration
	}{
		{workers: 10, want: time.Millisecond},
		{workers: 10, finished: true, want: finishedCooldown},
		{workers: 100_000, finished: true, want: 10 * time.Second},
	} {
		var c cooldown
		c.done("ns/pi", now, tc.workers, tc.finished)
		if got := c.wait("ns/pi", now); got != tc.want {
			t.Errorf("%d workers, finished %t: wait %v, want %v", tc.workers, tc.finished, got, tc.want)
		}
	}
}
