package controller

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestExpectations(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	e := NewExpectations(clk)
	if !e.Satisfied("ns/j") {
		t.Fatal("a job with no writes must be satisfied")
	}
	e.ExpectCreations("ns/j", "j-worker-0", "j-worker-1")
	e.ExpectDeletions("ns/j", "j-worker-5")
	e.CreationObserved("ns/j", "j-worker-0")
	if e.Satisfied("ns/j") {
		t.Fatal("satisfied with a creation and a deletion outstanding")
	}
	e.CreationObserved("ns/j", "j-worker-1")
	if e.Satisfied("ns/j") {
		t.Fatal("satisfied with a deletion outstanding")
	}
	if !e.Satisfied("ns/other") {
		t.Fatal("one job's expectations leaked into another's")
	}
	e.DeletionObserved("ns/j", "j-worker-5")
	if !e.Satisfied("ns/j") {
		t.Fatal("not satisfied after every write was observed")
	}

	e.ExpectCreations("ns/j", "j-worker-2")
	clk.SetTime(clk.Now().Add(expectationsTimeout + time.Second))
	if !e.Satisfied("ns/j") {
		t.Fatal("a lost event must not stall the job past the timeout")
	}
	e.Forget("ns/j")
	if !e.Satisfied("ns/j") {
		t.Fatal("forgotten job not satisfied")
	}
}

// storeAt is a Pod store that has read the API's history up to rv.
func storeAt(rv string) toolscache.Indexer {
	s := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	s.Bookmark(rv)
	return s
}

func TestPodStoresReadPast(t *testing.T) {
	var none *PodStores
	if none.ReadPast("1") {
		t.Error("no stores read past anything")
	}
	p := &PodStores{stores: []toolscache.Indexer{storeAt("120"), storeAt("95")}}
	for rv, want := range map[string]bool{"90": true, "95": true, "96": false, "130": false, "x": false} {
		if got := p.ReadPast(rv); got != want {
			t.Errorf("ReadPast(%q) = %t with stores at 120 and 95, want %t", rv, got, want)
		}
	}
	if (&PodStores{stores: []toolscache.Indexer{toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})}}).ReadPast("1") {
		t.Error("a store that has read nothing read past 1")
	}
}

// Found by make chaos: a worker created while the Pod informer's watch was
// down (an API server restart) was deleted again before the informer
// listed anew, so the informer never reported it, and the job waited for
// its creation until the expectations timed out (3 min 26 s idle). Once
// the cache has read past the create, the job is acted on again.
func TestCreateNeverReportedDoesNotStallTheJob(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	f := newFixture(t, interceptor.Funcs{}, job)
	// The cache has read nothing since the reconcile's creates.
	stores := &PodStores{stores: []toolscache.Indexer{toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})}}
	f.r.Expectations.ReadingFrom(stores)
	f.reconcile(t, job)
	if f.writes["create Pod"] != 2 {
		t.Fatalf("created %d worker Pods, want 2", f.writes["create Pod"])
	}
	// No informer reports the Pods here; one is deleted by name.
	gone := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, gone); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	f.writes = calls{}
	f.reconcile(t, job)
	if f.writes["create Pod"] != 0 {
		t.Fatalf("created %d Pods while the cache had not read past its own creates", f.writes["create Pod"])
	}
	stores.stores[0].Bookmark(bumpRV(t, gone.ResourceVersion))
	f.reconcile(t, job)
	if f.writes["create Pod"] != 1 {
		t.Errorf("created %d Pods once the cache had read past the creates, want worker 1 again", f.writes["create Pod"])
	}
}

// bumpRV is a resourceVersion newer than rv.
func bumpRV(t *testing.T, rv string) string {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return strconv.FormatUint(n+1000, 10)
}

// The fallback counts from the oldest expectation still awaited: expecting
// more Pods later used to set its clock back each time, so a job whose
// first create was never seen could wait for ever.
func TestExpectationsFallbackCountsFromTheOldestWait(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e := NewExpectations(clk)
	e.ExpectCreations("ns/pi", "pi-worker-0")
	clk.SetTime(clk.Now().Add(expectationsTimeout - time.Second))
	e.ExpectDeletions("ns/pi", "pi-worker-1")
	clk.SetTime(clk.Now().Add(2 * time.Second))
	if !e.Satisfied("ns/pi") {
		t.Error("past the timeout since the first expectation, still waiting")
	}
	e.CreationObserved("ns/pi", "pi-worker-0")
	e.DeletionObserved("ns/pi", "pi-worker-1")
	e.ExpectCreations("ns/pi", "pi-worker-2")
	if e.Satisfied("ns/pi") {
		t.Error("a new expectation after all were met is satisfied at once")
	}
}
