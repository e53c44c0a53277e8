package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// podCache plays the operator's Pod informer for a fixture: the reconciler
// reads the Pods through PodStores, the cache's own objects, as it does
// in the operator. Before each reconcile it is filled from the fake
// client, and a copy of each Pod is kept; after it, check fails the test
// for every cached Pod the reconcile changed in place.
type podCache struct {
	store toolscache.Indexer
	kept  map[string]*corev1.Pod
}

func newPodCache(f *fixture) *podCache {
	c := &podCache{store: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{podsInJob: podInJob})}
	f.r.Pods = &PodStores{stores: []toolscache.Indexer{c.store}}
	return c
}

func (c *podCache) fill(t *testing.T, f *fixture) {
	t.Helper()
	var list corev1.PodList
	if err := f.client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	objs := make([]any, len(list.Items))
	c.kept = map[string]*corev1.Pod{}
	for i := range list.Items {
		objs[i] = &list.Items[i]
		c.kept[list.Items[i].Name] = list.Items[i].DeepCopy()
	}
	if err := c.store.Replace(objs, ""); err != nil {
		t.Fatal(err)
	}
}

func (c *podCache) check(t *testing.T) {
	t.Helper()
	for _, o := range c.store.List() {
		p := o.(*corev1.Pod)
		if !equality.Semantic.DeepEqual(p, c.kept[p.Name]) {
			t.Errorf("the reconcile wrote to the cache's own Pod %s", p.Name)
		}
	}
}

// A worker replaced after an eviction is marked deleted in the
// reconcile's view only: the cached Pod used to get the deletionTimestamp
// itself, so when the delete then failed the cache showed a terminating
// Pod that was not, and concurrent readers raced with the write.
func TestReplacingAnEvictedWorkerLeavesTheCachedPodAlone(t *testing.T) {
	f, job, start := running(t, testjob.MakeMPIJob("pi", "ns").Workers(2).Obj())
	f.updatePod(t, "pi-worker-1", func(p *corev1.Pod) {
		disrupt(start.Add(30 * time.Second))(p)
		p.Status.Phase = corev1.PodFailed
	})
	cache := newPodCache(f)
	cache.fill(t, f)
	f.reconcile(t, job)
	cache.check(t)
	gone := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pi-worker-1"}, gone); err == nil && gone.DeletionTimestamp == nil {
		t.Error("the evicted worker was not deleted")
	}
}
