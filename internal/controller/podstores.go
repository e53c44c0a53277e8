package controller

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	toolscache "k8s.io/client-go/tools/cache"
)

// PodStores collects the Pod stores of the operator's cache (one, or one
// per watched namespace), so that the expectations can tell when the cache
// has read the API's history past a Pod this controller created.
//
// A create expectation waits for the informer to report the Pod. When the
// informer's watch breaks (an API server restart) and it lists again, a Pod
// created and deleted meanwhile is never reported: its expectation would
// stall the job until it times out (found by make chaos, where a simulated
// kubelet's late delete took a worker just made). A store that has read
// past the create's resourceVersion shows that Pod, or shows it gone: the
// create needs no event any more. This is the check client-go's stores
// offer for it (LastStoreSyncResourceVersion, KEP-5647); resourceVersions
// are compared as the API documents (k8s.io/apimachinery resourceversion).
type PodStores struct {
	mu     sync.Mutex
	stores []toolscache.Store
}

// NewInformer makes an informer as controller-runtime does, and keeps the
// store of each Pod informer. It is the cache option of that name.
func (p *PodStores) NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	inf := toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	if _, ok := obj.(*corev1.Pod); ok {
		p.mu.Lock()
		p.stores = append(p.stores, inf.GetStore())
		p.mu.Unlock()
	}
	return inf
}

// ReadPast reports whether every Pod store has read the API's history up
// to rv. It is false when that is not known: no store yet, a store that
// does not track it, or a resourceVersion that does not compare.
func (p *PodStores) ReadPast(rv string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.stores) == 0 {
		return false
	}
	for _, s := range p.stores {
		read := s.LastStoreSyncResourceVersion()
		if read == "" {
			return false
		}
		if c, err := resourceversion.CompareResourceVersion(read, rv); err != nil || c < 0 {
			return false
		}
	}
	return true
}
