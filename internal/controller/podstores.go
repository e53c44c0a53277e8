package controller

import (
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	toolscache "k8s.io/client-go/tools/cache"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// PodStores collects the Pod stores of the operator's cache (one, or one
// per watched namespace), so that the expectations can tell when the cache
// has read the API's history past a Pod this controller created, and a
// reconcile reads its job's Pods without copying them (InJob).
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
	stores []toolscache.Indexer
}

// NewInformer makes an informer as controller-runtime does, and keeps the
// store of each Pod informer. It is the cache option of that name.
func (p *PodStores) NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	_, pods := obj.(*corev1.Pod)
	if pods {
		indexers = maps.Clone(indexers)
		if indexers == nil {
			indexers = toolscache.Indexers{}
		}
		indexers[podsInJob] = podInJob
	}
	inf := toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	if pods {
		p.mu.Lock()
		p.stores = append(p.stores, inf.GetIndexer())
		p.mu.Unlock()
	}
	return inf
}

// podsInJob indexes the cached Pods by namespace, job and role
// (podInJob), for InJob: a reconcile reads its own job's Pods instead of
// matching the labels of every Pod of the namespace (100 jobs of 8
// workers in one namespace made each reconcile walk 900 Pods).
const podsInJob = "mpi-operator/namespace-job-role"

func podInJob(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	l := pod.Labels
	if l[kubeflow.LabelJobName] == "" || l[kubeflow.LabelJobRole] == "" {
		return nil, nil
	}
	return []string{keyOf(pod.Namespace, jobRole(l[kubeflow.LabelJobName], l[kubeflow.LabelJobRole]))}, nil
}

func jobRole(job, role string) string { return job + "/" + role }

// InJob returns the cached Pods of a job's role, the cache's own objects:
// they are shared, and only to be read. Listing them through the client
// copies each Pod into the list, which was a tenth of the operator's CPU
// during a 3000-worker job (a CPU profile, besides the garbage it leaves).
// ok is false when no store is kept: the caller lists instead.
func (p *PodStores) InJob(namespace, job, role string) (pods []*corev1.Pod, ok bool, err error) {
	if p == nil {
		return nil, false, nil
	}
	p.mu.Lock()
	stores := p.stores
	p.mu.Unlock()
	if len(stores) == 0 {
		return nil, false, nil
	}
	key := keyOf(namespace, jobRole(job, role))
	for _, s := range stores {
		objs, err := s.ByIndex(podsInJob, key)
		if err != nil {
			return nil, false, fmt.Errorf("reading the cached Pods of %s: %w", key, err)
		}
		for _, o := range objs {
			if pod, ok := o.(*corev1.Pod); ok {
				pods = append(pods, pod)
			}
		}
	}
	return pods, true, nil
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
