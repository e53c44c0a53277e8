package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// overlap watches two kinds of writes, creates and status updates: each
// write of the held kind waits until one of the awaited kind has been
// sent, or for at most wait. It tells how many held writes had completed
// when the first awaited one was sent: none when the two go out together,
// all of them when the awaited one comes after.
type overlap struct {
	held, awaited func(client.Object) bool
	wait          time.Duration

	mu        sync.Mutex
	on        bool
	sent      chan struct{}
	heldDone  int
	doneFirst int
}

func newOverlap(held, awaited func(client.Object) bool, wait time.Duration) *overlap {
	return &overlap{held: held, awaited: awaited, wait: wait, sent: make(chan struct{}), on: true, doneFirst: -1}
}

func isA[T client.Object](obj client.Object) bool {
	_, ok := obj.(T)
	return ok
}

func (o *overlap) pass(obj client.Object, write func() error) error {
	o.mu.Lock()
	on := o.on
	o.mu.Unlock()
	switch {
	case !on:
	case o.held(obj):
		select {
		case <-o.sent:
		case <-time.After(o.wait):
		}
		err := write()
		o.mu.Lock()
		o.heldDone++
		o.mu.Unlock()
		return err
	case o.awaited(obj):
		o.mu.Lock()
		if o.doneFirst < 0 {
			o.doneFirst = o.heldDone
			close(o.sent)
		}
		o.mu.Unlock()
	}
	return write()
}

func (o *overlap) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return o.pass(obj, func() error { return c.Create(ctx, obj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return o.pass(obj, func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
	}
}

func (o *overlap) set(on bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.on = on
}

// heldDoneFirst is how many held writes had completed when the first
// awaited one was sent, -1 if none was.
func (o *overlap) heldDoneFirst() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.doneFirst
}

// TestFirstLauncherIsMadeBesideItsWorkers: a new job's launcher Job is
// created while its workers' creates are in flight, so the Job
// controller's turn to make the launcher Pod overlaps them. Made after the
// workers, as before, each worker create waits in vain for the launcher
// Job's, completes, and only then is the launcher Job's sent.
func TestFirstLauncherIsMadeBesideItsWorkers(t *testing.T) {
	o := newOverlap(isA[*corev1.Pod], isA[*batchv1.Job], 2*time.Second)
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	f := newFixture(t, o.funcs(), job)
	f.reconcile(t, job)

	if done := o.heldDoneFirst(); done != 0 {
		t.Fatalf("the launcher Job was created after %d of the 2 workers, not beside them", done)
	}
	if f.writes["create Pod"] != 2 || f.writes["create Job"] != 1 {
		t.Errorf("writes: %v", f.writes)
	}
}

// TestFirstLauncherWaitsUntilEveryWorkerIsMade: the first launcher Job,
// made beside its workers, holds its Pod back from the scheduler (a
// simulated kubelet would run it at once, and a worker never made would
// look lost); the gate goes once the cache shows every worker, and the
// template's own gates stay.
func TestFirstLauncherWaitsUntilEveryWorkerIsMade(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/mine"}}
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	l := f.launcher(t)
	if !builder.GatedOnWorkers(&corev1.Pod{Spec: l.Spec.Template.Spec}) {
		t.Fatalf("launcher Job made beside its workers is not gated: %v", l.Spec.Template.Spec.SchedulingGates)
	}
	// The Job controller's Pod, from the gated template.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "pi-launcher-abcde", Namespace: "ns", Labels: l.Spec.Template.Labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(l, batchv1.SchemeGroupVersion.WithKind("Job"))},
	}, Spec: *l.Spec.Template.Spec.DeepCopy()}
	if err := f.client.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, i))
	}
	// Worker 1's create never reached the API (a leader killed midway):
	// the launcher stays gated while it is made again.
	lost := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, lost); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(context.Background(), lost); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, job)
	got := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	if !builder.GatedOnWorkers(got) {
		t.Fatal("the launcher Pod was let go while a worker was missing")
	}
	if isTrue(&f.job(t, job).Status, kubeflow.JobRestarting) {
		t.Fatal("a worker never made was taken for a lost one")
	}
	f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, 1))
	f.reconcile(t, job)
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	if gates := got.Spec.SchedulingGates; len(gates) != 1 || gates[0].Name != "example.com/mine" {
		t.Errorf("launcher Pod's gates %v once every worker was made, want only the template's own", gates)
	}
	// A cache that does not show the removal yet brings no second patch.
	got.Spec.SchedulingGates = append(got.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: builder.WorkersGate})
	if err := f.client.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["patch Pod"] != 0 {
		t.Errorf("the gate was removed again while the cache lagged: writes %v", f.writes)
	}
}

// TestRestartMakesWorkersBeforeTheLauncher: when a restart's successor
// launcher Job is made in the same reconcile as a lost worker's
// replacement, the worker comes first (startAttempt says why). Made
// together, the successor's create is sent before the worker's, held for
// a while, completes.
func TestRestartMakesWorkersBeforeTheLauncher(t *testing.T) {
	o := newOverlap(isA[*corev1.Pod], isA[*batchv1.Job], 200*time.Millisecond)
	o.set(false)
	f, job, start := runningWith(t, testjob.MakeMPIJob("pi", "ns").Workers(2).BackoffLimit(2).Obj(), o.funcs())
	f.updatePod(t, "pi-worker-1", disrupt(start.Add(30*time.Second)))
	f.reconcile(t, job) // records the restart
	gone := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, gone); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	o.set(true)
	f.reconcile(t, job)

	if f.writes["create Pod"] != 1 || f.writes["create Job"] != 1 {
		t.Fatalf("the restart did not replace the worker and the launcher Job in one reconcile: writes %v", f.writes)
	}
	if o.heldDoneFirst() != 1 {
		t.Error("the successor launcher Job was created before the lost worker's replacement, not after it")
	}
}

// TestRunningAndTheLastAddressAreWrittenTogether: when the last Pod of a
// job runs, the EndpointSlice write that publishes its address and the
// status write that says Running go out at once. Written one after the
// other, as before, the slice's create waits in vain for the status write
// and completes before it is sent.
func TestRunningAndTheLastAddressAreWrittenTogether(t *testing.T) {
	isStatus := func(obj client.Object) bool { return isA[*kubeflow.MPIJob](obj) }
	o := newOverlap(isA[*discoveryv1.EndpointSlice], isStatus, 2*time.Second)
	o.set(false)
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	f := newFixture(t, o.funcs(), job)
	f.reconcile(t, job)
	start := f.clock.Now()
	for i := range 2 {
		f.r.Expectations.CreationObserved("ns/pi", "pi-worker-"+string(rune('0'+i)))
		giveAddress(t, f, job, i, "10.0.0."+string(rune('1'+i)))
	}
	f.startLauncher(t, "pi-launcher-abcde", start)
	launcher := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-launcher-abcde"}, launcher); err != nil {
		t.Fatal(err)
	}
	launcher.Spec.Hostname, launcher.Spec.Subdomain = "pi-launcher", "pi" // as the Job's template has them
	if err := f.client.Update(context.Background(), launcher); err != nil {
		t.Fatal(err)
	}
	f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) {
		p.Status.PodIP, p.Status.PodIPs = "10.0.0.9", []corev1.PodIP{{IP: "10.0.0.9"}}
	})
	o.set(true)
	f.reconcile(t, job)

	if got := f.job(t, job); !isTrue(&got.Status, kubeflow.JobRunning) {
		t.Fatalf("job not Running: %+v", got.Status.Conditions)
	}
	if len(published(t, f, job)) != 3 {
		t.Fatalf("published %v, want the launcher and both workers", published(t, f, job))
	}
	if done := o.heldDoneFirst(); done != 0 {
		t.Errorf("Running was written after the EndpointSlice (%d slice writes done first), not beside it", done)
	}
}
