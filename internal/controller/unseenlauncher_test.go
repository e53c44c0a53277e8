package controller

import (
	"context"
	"sync/atomic"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// liveRead marks a Get made through the reconciler's APIReader, which
// reads the API server rather than the cache.
type liveRead struct{}

// liveReader is an APIReader over the fixture's client whose reads the
// interceptor can tell from the cache's.
type liveReader struct{ client.Reader }

func (r liveReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return r.Reader.Get(context.WithValue(ctx, liveRead{}, true), key, obj, opts...)
}

// The Job controller's launcher Pod can reach the operator's cache before
// the launcher Job that made it: Pods and Jobs are watched apart. Such a
// Pod is the attempt's own, not a former launcher's to delete (in e2e,
// deleting it failed a job of backoffLimit 0 before mpirun ran, with
// launcherCreationPolicy WaitForWorkersReady; AtStartup takes the same
// path once the workers are made).
func TestLauncherPodSeenBeforeItsJobIsKept(t *testing.T) {
	for _, policy := range []kubeflow.LauncherCreationPolicy{kubeflow.LauncherCreationPolicyAtStartup, kubeflow.LauncherCreationPolicyWaitForWorkersReady} {
		t.Run(string(policy), func(t *testing.T) {
			var hide atomic.Bool
			f := newFixture(t, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*batchv1.Job); ok && hide.Load() && ctx.Value(liveRead{}) == nil {
						return apierrors.NewNotFound(batchv1.Resource("jobs"), key.Name)
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			f.r.APIReader = liveReader{f.client}
			job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
			job.Spec.LauncherCreationPolicy = policy
			if err := f.client.Create(context.Background(), job); err != nil {
				t.Fatal(err)
			}
			f.reconcile(t, job)
			for i := range 2 {
				f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, i))
				f.updatePod(t, builder.WorkerName(job, i), func(p *corev1.Pod) {
					p.Status.Phase = corev1.PodRunning
					p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
				})
			}
			f.reconcile(t, job) // WaitForWorkersReady: the launcher Job is made now
			l := f.launcher(t)
			pod := launcherPod(job, l, 0)
			if err := f.client.Create(context.Background(), pod); err != nil {
				t.Fatal(err)
			}
			f.writes = calls{}

			hide.Store(true)
			f.reconcile(t, job)
			hide.Store(false)

			if f.writes["delete Pod"] != 0 {
				t.Fatalf("writes %v: the launcher's own Pod was deleted as an earlier launcher's", f.writes)
			}
			got := &corev1.Pod{}
			if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(pod), got); err != nil || got.DeletionTimestamp != nil {
				t.Fatalf("launcher Pod: %v, deleted at %v", err, got.DeletionTimestamp)
			}
			if now := f.launcher(t); now.UID != l.UID || !metav1.IsControlledBy(got, now) {
				t.Errorf("launcher Job %s replaced by %s", l.UID, now.UID)
			}
		})
	}
}

// A launcher Pod whose Job is gone from the API server too (deleted by
// hand, the Pod left to the garbage collector) is still an earlier
// launcher's: it is deleted, and no new launcher Job runs beside it.
func TestLauncherPodOfADeletedJobIsStillEnded(t *testing.T) {
	f, job, _ := runningJob(t, 2)
	l := f.launcher(t)
	if err := f.client.Delete(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, job)
	if f.writes["delete Pod"] != 1 || f.writes["create Job"] != 0 {
		t.Fatalf("writes %v, want the Pod of the deleted Job deleted and no launcher Job made beside it", f.writes)
	}
}
