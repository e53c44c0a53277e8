package controller

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// giveAddress runs worker i with the given IP, as the kubelet reports it.
func giveAddress(t *testing.T, f *fixture, job *kubeflow.MPIJob, i int, ip string) {
	t.Helper()
	pod := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: job.Namespace, Name: builder.WorkerName(job, i)}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP, pod.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	if err := f.client.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// oneRunningWorker is a job of one worker, made, whose Pod runs with
// address 10.0.0.10.
func oneRunningWorker(t *testing.T) (*fixture, *kubeflow.MPIJob) {
	t.Helper()
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, 0))
	giveAddress(t, f, job, 0, "10.0.0.10")
	return f, job
}

// published maps each hostname the job's slices publish to its address.
func published(t *testing.T, f *fixture, job *kubeflow.MPIJob) map[string]string {
	t.Helper()
	var list discoveryv1.EndpointSliceList
	if err := f.client.List(context.Background(), &list, client.InNamespace(job.Namespace)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, sl := range list.Items {
		if sl.Labels[discoveryv1.LabelServiceName] != builder.ServiceName(job) || sl.Labels[discoveryv1.LabelManagedBy] != builder.EndpointSliceManager {
			t.Errorf("slice %s labels %v: CoreDNS would not take it for the Service's, or kube-controller-manager for its own", sl.Name, sl.Labels)
		}
		if !metav1.IsControlledBy(&sl, job) {
			t.Errorf("slice %s is not controlled by the MPIJob", sl.Name)
		}
		for _, e := range sl.Endpoints {
			out[*e.Hostname] = e.Addresses[0]
		}
	}
	return out
}

// TestEndpointsArePublishedOnceEveryWorkerHasAnAddress: the Service
// selects nothing, and the operator publishes the workers' addresses. One
// worker's address waits for the others (paced); the write that completes
// the set goes out at once, and so does one that removes a worker.
func TestEndpointsArePublishedOnceEveryWorkerHasAnAddress(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(3).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	svc := &corev1.Service{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi"}, svc); err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Selector) != 0 {
		t.Errorf("Service selects %v: kube-controller-manager would publish its Pods too", svc.Spec.Selector)
	}
	for i := range 3 {
		f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, i))
	}

	giveAddress(t, f, job, 0, "10.0.0.10")
	f.writes = calls{}
	f.reconcile(t, job)
	if n := f.writes["create EndpointSlice"] + f.writes["update EndpointSlice"]; n != 0 {
		t.Errorf("one worker of three with an address: %d slice writes, want them paced", n)
	}

	f.clock.SetTime(f.clock.Now().Add(100 * time.Millisecond))
	giveAddress(t, f, job, 1, "10.0.0.11")
	giveAddress(t, f, job, 2, "10.0.0.12")
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["create EndpointSlice"] != 1 {
		t.Errorf("every worker with an address: writes %v, want one slice created at once", f.writes)
	}
	want := map[string]string{"pi-worker-0": "10.0.0.10", "pi-worker-1": "10.0.0.11", "pi-worker-2": "10.0.0.12"}
	if got := published(t, f, job); !maps.Equal(got, want) {
		t.Errorf("published %v, want %v", got, want)
	}

	f.writes = calls{}
	f.reconcile(t, job)
	if n := f.writes["create EndpointSlice"] + f.writes["update EndpointSlice"]; n != 0 {
		t.Errorf("nothing changed: %d slice writes", n)
	}

	pod := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, pod); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	f.r.Expectations.DeletionObserved("ns/pi", "pi-worker-1")
	f.writes = calls{}
	f.reconcile(t, job)
	if got := published(t, f, job); got["pi-worker-1"] != "" {
		t.Errorf("worker 1's Pod is gone and its address still published: %v (writes %v)", got, f.writes)
	}
}

// TestServiceThatSelectsGetsNoSlices: a Service made by upstream's
// operator selects the Pods, and kube-controller-manager publishes them;
// the operator adds no slice of its own beside.
func TestServiceThatSelectsGetsNoSlices(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	svc := builder.Service(job)
	svc.Spec.Selector = builder.JobLabels(job)
	f := newFixture(t, interceptor.Funcs{}, job, svc)
	f.reconcile(t, job)
	f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, 0))
	giveAddress(t, f, job, 0, "10.0.0.10")
	f.writes = calls{}
	f.reconcile(t, job)
	if n := f.writes["create EndpointSlice"]; n != 0 {
		t.Errorf("%d slices created beside a Service that selects", n)
	}
}

// TestSliceTheCacheHidIsWrittenSoon: a create that finds the slice made
// (the cache had not shown it yet) asks for a reconcile soon, as no Pod
// event may bring one once the last worker started.
func TestSliceTheCacheHidIsWrittenSoon(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	f := newFixture(t, interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if _, ok := obj.(*discoveryv1.EndpointSlice); ok {
			return apierrors.NewAlreadyExists(discoveryv1.Resource("endpointslices"), obj.GetName())
		}
		return c.Create(ctx, obj, opts...)
	}}, job)
	f.reconcile(t, job)
	f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, 0))
	giveAddress(t, f, job, 0, "10.0.0.10")
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatal(err)
	}
	if f.writes["create EndpointSlice"] != 1 || res.RequeueAfter <= 0 || res.RequeueAfter > conflictRetry {
		t.Errorf("slice creates %d, requeueAfter %v: want one create, and another reconcile within %v", f.writes["create EndpointSlice"], res.RequeueAfter, conflictRetry)
	}
}

// TestSliceWriteTheCacheDoesNotShowYetIsNotRepeated: a reconcile right
// after a slice write, while the cache does not show it yet, writes
// nothing (the API would refuse the create as made, or the update as
// stale) and asks to be called back; past sliceWriteWait the cache is
// believed, and a slice someone removed is made again.
func TestSliceWriteTheCacheDoesNotShowYetIsNotRepeated(t *testing.T) {
	f, job := oneRunningWorker(t)
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["create EndpointSlice"] != 1 {
		t.Fatalf("writes %v, want the slice created", f.writes)
	}
	var list discoveryv1.EndpointSliceList
	if err := f.client.List(context.Background(), &list, client.InNamespace("ns")); err != nil || len(list.Items) != 1 {
		t.Fatalf("slices %d, err %v", len(list.Items), err)
	}
	if err := f.client.Delete(context.Background(), &list.Items[0]); err != nil { // the cache has not seen the create
		t.Fatal(err)
	}
	f.writes = calls{}
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatal(err)
	}
	if f.writes["create EndpointSlice"] != 0 || res.RequeueAfter <= 0 || res.RequeueAfter > sliceWriteWait {
		t.Errorf("cache behind the slice write: writes %v, requeueAfter %v; want none, and a call back within %v", f.writes, res.RequeueAfter, sliceWriteWait)
	}
	f.clock.SetTime(f.clock.Now().Add(sliceWriteWait))
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["create EndpointSlice"] != 1 || published(t, f, job)["pi-worker-0"] != "10.0.0.10" {
		t.Errorf("the slice was removed, and past the wait: writes %v, published %v; want it made again", f.writes, published(t, f, job))
	}
}

// TestWorkerIsPublishedOnceItRuns: a worker whose sandbox has an address
// while its image is still pulling has no name yet, so the launcher's
// init container keeps waiting; the write that publishes it goes out as
// soon as it runs.
func TestWorkerIsPublishedOnceItRuns(t *testing.T) {
	f, job := oneRunningWorker(t)
	f.updatePod(t, "pi-worker-0", func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending })
	f.reconcile(t, job)
	if got := published(t, f, job); got["pi-worker-0"] != "" {
		t.Fatalf("a worker not running yet is published: %v", got)
	}
	f.updatePod(t, "pi-worker-0", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning })
	f.reconcile(t, job)
	if got := published(t, f, job); got["pi-worker-0"] != "10.0.0.10" {
		t.Errorf("the running worker is not published: %v (writes %v)", got, f.writes)
	}
}

// The status write and the slice writes that go out together share no
// object: the status write decoded the API server's answer into the
// reconcile's job while the slice writes read its name (make chaos-short,
// with the operator built with -race, reported it 10 times). With no
// synchronisation between the two, go test -race reports such a race
// here.
func TestStatusAndSliceWritesShareNoObject(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, 0))
	f.startLauncher(t, "pi-launcher-abcde", f.clock.Now())
	giveAddress(t, f, job, 0, "10.0.0.10")
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["status MPIJob"] != 1 || f.writes["create EndpointSlice"] != 1 {
		t.Fatalf("writes %v, want the status and the slice in one reconcile", f.writes)
	}
}
