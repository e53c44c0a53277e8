package controller

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// failover replaces the reconciler by a new one over the same API, as a
// new leader starts: nothing the old one held in memory is left.
func (f *fixture) failover() {
	old := f.r
	f.r = &Reconciler{
		Client: old.Client, APIReader: old.APIReader, Recorder: old.Recorder, Clock: old.Clock,
		Expectations: NewExpectations(old.Clock), Options: old.Options, CreateParallelism: old.CreateParallelism,
	}
}

// tryReconcile reconciles and returns the error, for steps expected to
// fail.
func (f *fixture) tryReconcile(job *kubeflow.MPIJob) error {
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	return err
}

// hold keeps a Pod terminating once it is deleted, as a kubelet does for
// its grace period.
func (f *fixture) hold(t *testing.T, name string) {
	t.Helper()
	p := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, p); err != nil {
		t.Fatal(err)
	}
	p.Finalizers = append(p.Finalizers, "test/hold")
	if err := f.client.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// release lets a held Pod go.
func (f *fixture) release(t *testing.T, name string) {
	t.Helper()
	p := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, p); err != nil {
		t.Fatal(err)
	}
	p.Finalizers = nil
	if err := f.client.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func TestRestartKeepsTheRetriesLeftAcrossAFailover(t *testing.T) {
	f, job, start := runningJob(t, 2)
	// The program failed once before the worker was lost: 1 retry left.
	f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "launcher", RestartCount: 1,
			LastTerminationState: corev1.ContainerState{Terminated: exited(1, start.Add(10*time.Second))}}}
	})
	old := f.launcher(t)
	f.updatePod(t, "pi-worker-1", disrupt(start.Add(30*time.Second)))

	// The API server refuses the new launcher Job (throttled) until the
	// leader has changed.
	refuse := true
	f.client = interceptor.NewClient(f.client.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*batchv1.Job); ok && refuse {
				return errors.New("the server has received too many requests")
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	f.r.Client = f.client
	for range 3 {
		_ = f.tryReconcile(job)
	}
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(old), &batchv1.Job{}); err == nil {
		t.Fatal("old launcher Job not deleted")
	}

	refuse = false
	f.failover()
	f.reconcile(t, job)
	l := f.launcher(t)
	if l.UID == old.UID {
		t.Fatal("launcher Job not replaced")
	}
	if got := ptr.Deref(l.Spec.BackoffLimit, -1); got != 1 {
		t.Errorf("after a failover the new launcher Job has backoffLimit %d, want the 1 retry left", got)
	}
	if got := f.job(t, job); !isTrue(&got.Status, kubeflow.JobRestarting) {
		t.Errorf("conditions: %+v", got.Status.Conditions)
	}
}

func TestNewLauncherWaitsUntilTheLostWorkerIsGone(t *testing.T) {
	f, job, _ := runningJob(t, 2)
	// Deleted by hand, the worker stops within its grace period; meanwhile
	// its old address still resolves.
	f.hold(t, "pi-worker-1")
	f.deletePod(t, "pi-worker-1")
	f.deletePod(t, "pi-launcher-abcde") // only the worker holds the new attempt back
	f.reconcile(t, job)
	f.reconcile(t, job)
	if !ptr.Deref(f.launcher(t).Spec.Suspend, false) {
		t.Fatal("new launcher Job may run while the lost worker is still terminating")
	}

	f.release(t, "pi-worker-1")
	f.reconcile(t, job)
	if ptr.Deref(f.launcher(t).Spec.Suspend, true) {
		t.Error("new launcher Job still suspended once the lost worker is gone")
	}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, &corev1.Pod{}); err != nil {
		t.Errorf("worker not replaced: %v", err)
	}
}

func TestScaleDownAndUpWithinTheGracePeriodDoesNotRestart(t *testing.T) {
	f, job, _ := runningJob(t, 2)
	old := f.launcher(t)
	scale := func(n int32) { t.Helper(); f.scaleWorkers(t, job, n) }
	f.hold(t, "pi-worker-1")
	scale(1)
	f.reconcile(t, job)
	p := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, p); err != nil || !isTerminating(p) {
		t.Fatalf("surplus worker not being deleted: %v", err)
	}
	f.r.Expectations.DeletionObserved("ns/pi", "pi-worker-1")

	// Scaled back up while the removed worker still stops.
	scale(2)
	f.writes = calls{}
	f.reconcile(t, job)
	f.reconcile(t, job)
	if l := f.launcher(t); l.UID != old.UID || f.writes["patch MPIJob"] != 0 || f.writes["delete Job"] != 0 {
		t.Errorf("the job restarted: writes %v", f.writes)
	}
	if got := f.job(t, job); isTrue(&got.Status, kubeflow.JobRestarting) {
		t.Errorf("conditions: %+v", got.Status.Conditions)
	}
	// The hostfile lists the worker again only once its old Pod is gone,
	// so a stopping worker it lists is always one the attempt lost.
	if h := f.configMap(t).Data[builder.HostfileKey]; len(builder.HostfileHosts(h)) != 1 {
		t.Errorf("hostfile while the removed worker stops: %q", h)
	}
	f.release(t, "pi-worker-1")
	f.reconcile(t, job)
	if h := f.configMap(t).Data[builder.HostfileKey]; len(builder.HostfileHosts(h)) != 2 {
		t.Errorf("hostfile once the removed worker is gone: %q", h)
	}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, &corev1.Pod{}); err != nil {
		t.Errorf("worker not made again: %v", err)
	}
	if l := f.launcher(t); l.UID != old.UID {
		t.Error("the job restarted")
	}
}

// scaleWorkers sets the job's worker replicas, as a user scaling it does.
func (f *fixture) scaleWorkers(t *testing.T, job *kubeflow.MPIJob, n int32) {
	t.Helper()
	j := f.job(t, job)
	j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Replicas = ptr.To(n)
	if err := f.client.Update(context.Background(), j); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) configMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-config"}, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// ConfigMaps have no expectations: the cache may still show the hostfile
// a scale-down just replaced when the job is scaled up again. The
// decision whether a stopping worker belonged to the attempt reads what
// the controller recorded on the MPIJob, not the ConfigMap, so a
// lagging ConfigMap cache cannot restart the job.
func TestScaleDownAndUpOnALaggingConfigMapCacheDoesNotRestart(t *testing.T) {
	var mu sync.Mutex
	var stale *corev1.ConfigMap
	f, job, _ := runningWith(t, testjob.MakeMPIJob("pi", "ns").Workers(2).BackoffLimit(2).Obj(), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			mu.Lock()
			defer mu.Unlock()
			if cm, ok := obj.(*corev1.ConfigMap); ok && stale != nil && key.Name == stale.Name {
				stale.DeepCopyInto(cm)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	old := f.launcher(t)
	scale := func(n int32) { t.Helper(); f.scaleWorkers(t, job, n) }
	lagging := f.configMap(t)
	f.hold(t, "pi-worker-1")
	scale(1)
	f.reconcile(t, job)
	if h := f.configMap(t).Data[builder.HostfileKey]; h == lagging.Data[builder.HostfileKey] {
		t.Fatalf("the scale-down did not rewrite the hostfile: %q", h)
	}
	f.r.Expectations.DeletionObserved("ns/pi", "pi-worker-1")

	// The cache shows the ConfigMap as it was before the scale-down.
	mu.Lock()
	stale = lagging
	mu.Unlock()
	scale(2)
	f.writes = calls{}
	for range 2 {
		// Writing the stale ConfigMap back conflicts; that error is the
		// cache's lag, and the reconcile is retried.
		_, _ = f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	}
	if l := f.launcher(t); l.UID != old.UID || f.writes["delete Job"] != 0 {
		t.Errorf("the job restarted: writes %v", f.writes)
	}
	got := f.job(t, job)
	if _, ok := got.Annotations[AnnotationRestart]; ok || isTrue(&got.Status, kubeflow.JobRestarting) {
		t.Errorf("restart recorded: %v, conditions %+v", got.Annotations, got.Status.Conditions)
	}
}
