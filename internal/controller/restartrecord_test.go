package controller

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// The restart record is written only over the job the decision was taken
// on: a job changed since it was read (here by a user, between the read
// and the patch) refuses it, and the next reconcile decides again on
// fresh data. Without the precondition the patch went through and the
// status write that followed could never conflict.
func TestRestartRecordOnAChangedJobIsRefused(t *testing.T) {
	changed := false
	f, job, start := runningWith(t, testjob.MakeMPIJob("pi", "ns").Workers(2).Obj(), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*kubeflow.MPIJob); ok && !changed {
				changed = true
				stored := &kubeflow.MPIJob{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), stored); err != nil {
					return err
				}
				metaSet(stored, "team", "a")
				if err := c.Update(ctx, stored); err != nil {
					return err
				}
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	f.updatePod(t, "pi-worker-1", disrupt(start.Add(30*time.Second)))
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if !apierrors.IsConflict(err) {
		t.Fatalf("reconcile over a job changed since it was read: err %v, want a conflict", err)
	}
	got := f.job(t, job)
	if _, ok := restartOf(got); ok || got.Labels["team"] != "a" {
		t.Fatalf("after the refused patch: annotations %v, labels %v", got.Annotations, got.Labels)
	}
	f.reconcile(t, job)
	if _, ok := restartOf(f.job(t, job)); !ok {
		t.Fatal("the reconcile on fresh data recorded no restart")
	}
}

func metaSet(job *kubeflow.MPIJob, k, v string) {
	if job.Labels == nil {
		job.Labels = map[string]string{}
	}
	job.Labels[k] = v
}
