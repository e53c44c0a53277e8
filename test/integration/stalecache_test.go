package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpi-operator/mpi-operator/internal/controller"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// podsNotYetCached is the operator's cache before it has seen the Pods it
// made: right after a leader change, or an informer lagging the writes.
type podsNotYetCached struct{ client.Client }

func (c podsNotYetCached) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*corev1.PodList); ok {
		return nil
	}
	return c.Client.List(ctx, list, opts...)
}

// TestWorkerCreateAnsweredAlreadyExistsIsOurs: a reconcile whose cache
// misses the workers creates them again, the API server answers
// AlreadyExists, and the operator reads the Pod past its cache, with its
// own RBAC, finds it is the job's and carries on: no error, no second Pod.
func TestWorkerCreateAnsweredAlreadyExistsIsOurs(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("pi", ns).Workers(1).Obj())
	before := waitWorkers(t, job, 1)

	stale := &controller.Reconciler{
		Client:            podsNotYetCached{r.Client},
		APIReader:         r.APIReader,
		Recorder:          r.Recorder,
		Clock:             testClock,
		Expectations:      controller.NewExpectations(testClock),
		Options:           r.Options,
		CreateParallelism: 1,
	}
	if _, err := stale.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}); err != nil {
		t.Fatalf("a create answered AlreadyExists for the job's own Pod failed the reconcile: %v", err)
	}
	after, err := workerPods(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || after[0].UID != before[0].UID {
		t.Errorf("workers after: %d (first the same: %t), want the one made before", len(after), len(after) == 1 && after[0].UID == before[0].UID)
	}
}
