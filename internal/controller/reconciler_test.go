package controller

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// calls counts the writes a reconcile makes, by verb and kind.
type calls map[string]int

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(kubeflow.AddToScheme(s))
	return s
}

type fixture struct {
	clock    *clocktesting.FakePassiveClock
	r        *Reconciler
	client   client.Client
	recorder *events.FakeRecorder
	writes   calls
}

// newFixture makes a reconciler over a fake client holding objs. funcs may
// intercept calls; every write (create, update, patch, delete, status) is
// counted in writes.
func newFixture(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) *fixture {
	t.Helper()
	f := &fixture{writes: calls{}, recorder: events.NewFakeRecorder(100)}
	// Workers are created from parallel goroutines.
	var mu sync.Mutex
	count := func(verb string, obj client.Object) {
		mu.Lock()
		defer mu.Unlock()
		f.writes[verb+" "+strings.TrimPrefix(typeName(obj), "*v1.")]++
	}
	userCreate, userStatus, userDelete := funcs.Create, funcs.SubResourceUpdate, funcs.Delete
	funcs.Create = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		count("create", obj)
		if obj.GetUID() == "" {
			obj.SetUID(uuid.NewUUID()) // as the API server does
		}
		if userCreate != nil {
			return userCreate(ctx, c, obj, opts...)
		}
		return c.Create(ctx, obj, opts...)
	}
	userUpdate := funcs.Update
	funcs.Update = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
		count("update", obj)
		if userUpdate != nil {
			return userUpdate(ctx, c, obj, opts...)
		}
		return c.Update(ctx, obj, opts...)
	}
	userPatch := funcs.Patch
	funcs.Patch = func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		count("patch", obj)
		if userPatch != nil {
			return userPatch(ctx, c, obj, patch, opts...)
		}
		return c.Patch(ctx, obj, patch, opts...)
	}
	funcs.Delete = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		count("delete", obj)
		if userDelete != nil {
			return userDelete(ctx, c, obj, opts...)
		}
		return c.Delete(ctx, obj, opts...)
	}
	funcs.SubResourceUpdate = func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		count("status", obj)
		if userStatus != nil {
			return userStatus(ctx, c, sub, obj, opts...)
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}
	base := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(objs...).
		WithStatusSubresource(&kubeflow.MPIJob{}, &batchv1.Job{}, &corev1.Pod{}).Build()
	f.client = interceptor.NewClient(base, funcs)
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f.clock = clk
	f.r = &Reconciler{
		Client: f.client, APIReader: f.client, Recorder: f.recorder, Clock: clk,
		Expectations: NewExpectations(clk), Options: builder.Options{ClusterDomain: "cluster.local"},
		CreateParallelism: 4,
	}
	return f
}

func typeName(obj client.Object) string {
	switch obj.(type) {
	case *corev1.Pod:
		return "Pod"
	case *batchv1.Job:
		return "Job"
	case *corev1.Secret:
		return "Secret"
	case *corev1.Service:
		return "Service"
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *kubeflow.MPIJob:
		return "MPIJob"
	case *discoveryv1.EndpointSlice:
		return "EndpointSlice"
	}
	return "other"
}

func (f *fixture) reconcile(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
}

func (f *fixture) drainEvents() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestFirstReconcileMakesChildrenWithOneStatusWrite(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(3).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)

	want := calls{"create Secret": 1, "create Service": 1, "create ConfigMap": 1, "create Pod": 3, "create Job": 1, "status MPIJob": 1}
	for k, v := range want {
		if f.writes[k] != v {
			t.Errorf("%s: %d calls, want %d (all: %v)", k, f.writes[k], v, f.writes)
		}
	}
	if ev := f.drainEvents(); len(ev) != 1 || !strings.Contains(ev[0], ReasonCreated) {
		t.Errorf("events = %q, want one %s", ev, ReasonCreated)
	}
	if got := testutil.ToFloat64(jobInfo.WithLabelValues("pi-launcher", "ns")); got != 1 {
		t.Errorf("mpi_operator_job_info{launcher=pi-launcher,namespace=ns} = %v, want 1", got)
	}

	// Nothing changed: a second reconcile writes nothing at all.
	f.writes = calls{}
	f.reconcile(t, job)
	if len(f.writes) != 0 {
		t.Errorf("idle reconcile wrote %v", f.writes)
	}
	if ev := f.drainEvents(); len(ev) != 0 {
		t.Errorf("idle reconcile emitted %q", ev)
	}
}

func TestNoEventOrMetricWhenStatusWriteFails(t *testing.T) {
	job := testjob.MakeMPIJob("nowrite", "ns").Workers(1).Obj()
	f := newFixture(t, interceptor.Funcs{
		SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			return errors.New("etcd is down")
		},
	}, job)
	before := testutil.ToFloat64(jobsCreated)
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err == nil || !strings.Contains(err.Error(), "etcd is down") {
		t.Fatalf("reconcile error = %v, want the status write's", err)
	}
	if ev := f.drainEvents(); len(ev) != 0 {
		t.Errorf("events emitted before a successful status write: %q", ev)
	}
	if got := testutil.ToFloat64(jobsCreated); got != before {
		t.Errorf("jobs created counter moved from %v to %v without a status write", before, got)
	}
	if jobInfo.DeleteLabelValues("nowrite-launcher", "ns") {
		t.Error("mpi_operator_job_info has a series for a job whose status was never written")
	}
}

func TestExpectationsStopDuplicateCreatesFromAStaleCache(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(4).Obj()
	// The cache never shows worker Pods, as an informer that lags behind.
	f := newFixture(t, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.PodList); ok {
				return nil
			}
			return c.List(ctx, list, opts...)
		},
	}, job)
	f.reconcile(t, job)
	if f.writes["create Pod"] != 4 {
		t.Fatalf("created %d Pods, want 4", f.writes["create Pod"])
	}
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["create Pod"] != 0 {
		t.Errorf("created %d Pods again while the cache had not caught up", f.writes["create Pod"])
	}
	// The informer reports the Pods: the job is acted on again.
	for i := range 4 {
		f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, i))
	}
	if !f.r.Expectations.Satisfied("ns/pi") {
		t.Fatal("expectations not satisfied after every creation was observed")
	}
}

func TestAlreadyExistsOnOwnChildIsSuccess(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	// A new controller (fresh expectations) over a cache that shows no
	// Pods: its creates answer AlreadyExists, and that is no error.
	f.r.Expectations = NewExpectations(f.r.Clock)
	f.r.Client = interceptor.NewClient(f.client.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.PodList); ok {
				return nil
			}
			return c.List(ctx, list, opts...)
		},
	})
	f.reconcile(t, job)
	var pods corev1.PodList
	if err := f.client.List(context.Background(), &pods); err != nil || len(pods.Items) != 2 {
		t.Errorf("%d Pods (err %v), want 2", len(pods.Items), err)
	}
}

func TestInvalidJobFailsWithValidationError(t *testing.T) {
	cases := map[string]struct {
		job   *kubeflow.MPIJob
		field string
	}{
		"slotsPerWorker 0": {testjob.MakeMPIJob("pi", "ns").Workers(1).Slots(0).Obj(), "spec.slotsPerWorker"},
		// The CRD admits it (the last worker's name fits), but its
		// hostfile would not fit in a ConfigMap: found by
		// FuzzChildrenAreAdmitted, and 2^31-1 workers made the controller
		// build a 60 GB hostfile.
		"more workers than a hostfile holds": {testjob.MakeMPIJob("a", "ns").Workers(1<<31 - 1).Obj(), "spec.mpiReplicaSpecs[Worker].replicas"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := tc.job
			f := newFixture(t, interceptor.Funcs{}, job)
			f.reconcile(t, job)
			got := &kubeflow.MPIJob{}
			if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
				t.Fatal(err)
			}
			c := getCondition(&got.Status, kubeflow.JobFailed)
			if c == nil || c.Reason != ReasonValidationError || !strings.Contains(c.Message, tc.field) {
				t.Fatalf("Failed condition = %+v, want ValidationError naming %s", c, tc.field)
			}
			if n := f.writes["create Pod"] + f.writes["create Job"] + f.writes["create Secret"] + f.writes["create ConfigMap"]; n != 0 {
				t.Errorf("made %d children for an invalid job", n)
			}
			if ev := f.drainEvents(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+ReasonValidationError) {
				t.Errorf("events = %q, want one Warning %s", ev, ReasonValidationError)
			}
			// Terminal: reconciling again neither writes nor errors (no hot loop).
			f.writes = calls{}
			f.reconcile(t, job)
			if len(f.writes) != 0 {
				t.Errorf("reconcile of a failed invalid job wrote %v", f.writes)
			}
		})
	}
}

func TestForeignManagedByIsNotTouched(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).ManagedBy(kubeflow.MultiKueueController).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	if len(f.writes) != 0 {
		t.Errorf("wrote %v for a job managed by MultiKueue", f.writes)
	}
}

func TestForeignObjectWithAChildsNameIsAnError(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	// Someone else's Pod holds the first worker's name; it carries none of
	// our labels, so the cache would never show it.
	squatter := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pi-worker-0", Namespace: "ns"}}
	f := newFixture(t, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.PodList); ok {
				return nil
			}
			return c.List(ctx, list, opts...)
		},
	}, job, squatter)
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err == nil || !strings.Contains(err.Error(), "pi-worker-0 exists and is not controlled by this MPIJob") {
		t.Fatalf("reconcile error = %v, want one naming the foreign Pod", err)
	}
	if !f.r.Expectations.Satisfied("ns/pi") {
		t.Error("a failed create left an expectation that would stall the job")
	}
}

func TestFinishingReconcileWritesOutcomeBeforeTTLDeletes(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).TTL(0).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	l := &batchv1.Job{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-launcher"}, l); err != nil {
		t.Fatal(err)
	}
	l.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	if err := f.client.Status().Update(context.Background(), l); err != nil {
		t.Fatal(err)
	}

	// The informer would have seen the worker by now.
	f.r.Expectations.CreationObserved("ns/pi", "pi-worker-0")
	// The TTL has already run out, yet this reconcile only records success.
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatal(err)
	}
	got := &kubeflow.MPIJob{}
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatalf("job deleted in the reconcile that finished it: %v", err)
	}
	if !isTrue(&got.Status, kubeflow.JobSucceeded) || res.RequeueAfter <= 0 {
		t.Fatalf("Succeeded=%t requeueAfter=%v, want the outcome written and a call back for the TTL",
			isTrue(&got.Status, kubeflow.JobSucceeded), res.RequeueAfter)
	}
	f.reconcile(t, job)
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(job), got); err == nil {
		t.Error("job still exists after its TTL")
	}
}

func TestValidationFailureStillHonoursTTL(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Slots(0).TTL(30).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > 30*time.Second {
		t.Errorf("requeueAfter = %v, want the TTL's 30s", res.RequeueAfter)
	}
}

func TestCountOnlyChangesAreCoalesced(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	for i := range 2 {
		f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, i))
	}
	runWorker := func(i int) {
		pod := &corev1.Pod{}
		if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: builder.WorkerName(job, i)}, pod); err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = corev1.PodRunning
		if err := f.client.Status().Update(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}

	// A worker starts right after the first status write: its count
	// waits, the longer as the job is still starting (pacer.go).
	runWorker(0)
	f.writes = calls{}
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatal(err)
	}
	if f.writes["status MPIJob"] != 0 || f.writes["update ConfigMap"] != 0 {
		t.Errorf("count-only changes written at once: %v", f.writes)
	}
	if res.RequeueAfter <= coalescePeriod || res.RequeueAfter > startingGap {
		t.Errorf("requeueAfter = %v, want a call back after %v, within %v", res.RequeueAfter, coalescePeriod, startingGap)
	}
	f.clock.SetTime(f.clock.Now().Add(2 * coalescePeriod))
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["status MPIJob"] != 0 {
		t.Errorf("a starting job's counts written after %v: %v", 2*coalescePeriod, f.writes)
	}

	// Once startingGap has passed the counts are written. discover_hosts.sh,
	// which no launcher runs yet, waits for every worker, then a
	// coalescing period.
	f.clock.SetTime(f.clock.Now().Add(startingGap))
	runWorker(1)
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["status MPIJob"] != 1 || f.writes["update ConfigMap"] != 0 {
		t.Errorf("writes after the coalescing period = %v, want one status write and no ConfigMap update", f.writes)
	}
	f.clock.SetTime(f.clock.Now().Add(coalescePeriod))
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["update ConfigMap"] != 1 {
		t.Errorf("writes once every worker ran for a coalescing period = %v, want one ConfigMap update", f.writes)
	}
	got := &kubeflow.MPIJob{}
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	if a := got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeWorker].Active; a != 2 {
		t.Errorf("worker active = %d, want 2", a)
	}
}

func TestLauncherCountsWaitForTheLauncherOutcome(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	f.r.Expectations.CreationObserved("ns/pi", "pi-worker-0")
	setLauncher := func(mutate func(*batchv1.JobStatus)) {
		l := &batchv1.Job{}
		if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-launcher"}, l); err != nil {
			t.Fatal(err)
		}
		mutate(&l.Status)
		if err := f.client.Status().Update(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
	setLauncher(func(s *batchv1.JobStatus) { s.Active = 1 })
	f.clock.SetTime(f.clock.Now().Add(time.Minute))
	f.reconcile(t, job) // notes the pending count
	f.clock.SetTime(f.clock.Now().Add(time.Minute))
	f.reconcile(t, job) // writes it

	// The launcher Pod succeeded: the Job controller first uncounts it, then
	// counts it and meets the success criteria, then completes the Job, in
	// writes a second or more apart. Only the outcome is written.
	steps := []func(*batchv1.JobStatus){
		func(s *batchv1.JobStatus) {
			s.Active = 0
			s.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"launcher-pod"}}
		},
		func(s *batchv1.JobStatus) {
			s.UncountedTerminatedPods, s.Succeeded = nil, 1
			s.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}}
		},
	}
	f.writes = calls{}
	for _, step := range steps {
		setLauncher(step)
		f.clock.SetTime(f.clock.Now().Add(5 * time.Second))
		f.reconcile(t, job)
		f.clock.SetTime(f.clock.Now().Add(5 * time.Second))
		f.reconcile(t, job)
	}
	if f.writes["status MPIJob"] != 0 {
		t.Fatalf("status written %d times while the launcher Job was finishing", f.writes["status MPIJob"])
	}
	setLauncher(func(s *batchv1.JobStatus) {
		s.Conditions = append(s.Conditions, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue})
	})
	f.reconcile(t, job)
	got := &kubeflow.MPIJob{}
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	if f.writes["status MPIJob"] != 1 || !isTrue(&got.Status, kubeflow.JobSucceeded) ||
		got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeLauncher].Succeeded != 1 {
		t.Errorf("writes %v, status %+v: want one write with Succeeded and the launcher counted", f.writes, got.Status)
	}
}

func TestReconcileOnAStaleCacheWaitsForItsOwnStatusWrite(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	var stale *kubeflow.MPIJob
	f := newFixture(t, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if j, ok := obj.(*kubeflow.MPIJob); ok && stale != nil {
				stale.DeepCopyInto(j)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}, job)
	snapshot := &kubeflow.MPIJob{}
	if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(job), snapshot); err != nil {
		t.Fatal(err)
	}
	stale = snapshot
	// The cache serves the job as it was before the first status write.
	f.reconcile(t, job)
	f.r.Expectations.CreationObserved("ns/pi", "pi-worker-0")
	f.writes = calls{}
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.writes) != 0 || res.RequeueAfter <= 0 {
		t.Errorf("on a cache without our status write: writes %v, requeueAfter %v; want none and a call back", f.writes, res.RequeueAfter)
	}
	// Once the cache has it, reconciles go on.
	stale = nil
	f.reconcile(t, job)
	if f.writes["status MPIJob"] != 0 {
		t.Errorf("status rewritten with nothing new: %v", f.writes)
	}
}

func TestRefusedCreateIsAWarningEvent(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	quota := apierrors.NewForbidden(corev1.Resource("pods"), "pi-worker-0", errors.New(`exceeded quota: "compute"`))
	f := newFixture(t, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok {
				return quota
			}
			return c.Create(ctx, obj, opts...)
		},
	}, job)
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("reconcile error = %v, want the refused create's", err)
	}
	var warned bool
	for _, e := range f.drainEvents() {
		warned = warned || (strings.HasPrefix(e, "Warning "+ReasonFailedCreate) && strings.Contains(e, `exceeded quota: "compute"`))
	}
	if !warned {
		t.Errorf("no Warning %s event naming the quota", ReasonFailedCreate)
	}
}

// TestRefusedDeleteLeavesNoExpectationWaiting: a delete the API server
// refuses (429) stops the batches; the Pods never tried must not keep
// the job waiting for deletions no event will report.
func TestRefusedDeleteLeavesNoExpectationWaiting(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(4).Obj()
	f := newFixture(t, interceptor.Funcs{
		Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error {
			return apierrors.NewTooManyRequests("throttled", 1)
		},
	}, job)
	defaulted := job.DeepCopy()
	kubeflow.SetDefaults(defaulted)
	var pods []*corev1.Pod
	for i := range 4 {
		pods = append(pods, builder.WorkerPod(defaulted, i, f.r.Options))
	}
	if err := f.r.deletePods(context.Background(), defaulted, pods); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("deletePods error = %v, want the 429", err)
	}
	if !f.r.Expectations.Satisfied(jobKey(defaulted)) {
		t.Error("the job still waits for deletions that were never made")
	}
}
