package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// expectationsTimeout bounds how long a lost watch event can stall a job:
// after it, the cache is trusted again.
const expectationsTimeout = 5 * time.Minute

// Expectations remembers, per job, the worker Pods this controller created
// or deleted and has not yet seen in its cache. While any are outstanding
// the cache is known to be stale for that job, and the controller does not
// act on it: that is what keeps a restarted or lagging informer from making
// the controller create or delete a Pod twice.
type Expectations struct {
	clock clock.PassiveClock
	// readPast, when set, reports whether the cache has read the API's
	// history up to a resourceVersion (PodStores.ReadPast).
	readPast func(rv string) bool
	mu       sync.Mutex
	jobs     map[string]*expected
}

type expected struct {
	creates, deletes sets.Set[string]
	// createdRV is the newest resourceVersion among the creates.
	createdRV string
	// since is when the oldest expectation still outstanding was made.
	since time.Time
}

// NewExpectations returns an empty store.
func NewExpectations(c clock.PassiveClock) *Expectations {
	return &Expectations{clock: c, jobs: map[string]*expected{}}
}

// ReadingFrom lets the expectations drop the creates a cache has read
// past without reporting them (PodStores).
func (e *Expectations) ReadingFrom(p *PodStores) *Expectations {
	e.readPast = p.ReadPast
	return e
}

func (e *Expectations) entry(job string) *expected {
	x, ok := e.jobs[job]
	if !ok {
		x = &expected{creates: sets.New[string](), deletes: sets.New[string]()}
		e.jobs[job] = x
	}
	// The fallback counts from the oldest write still awaited: a job that
	// keeps expecting more must not push it back for ever.
	if x.creates.Len() == 0 && x.deletes.Len() == 0 {
		x.since = e.clock.Now()
	}
	return x
}

// ExpectCreations records Pods about to be created.
func (e *Expectations) ExpectCreations(job string, pods ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(job).creates.Insert(pods...)
}

// Created records the resourceVersion the API server gave a Pod created
// for the job.
func (e *Expectations) Created(job, rv string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.jobs[job]
	if !ok || rv == "" {
		return
	}
	if c, err := resourceversion.CompareResourceVersion(rv, x.createdRV); x.createdRV == "" || (err == nil && c > 0) {
		x.createdRV = rv
	}
}

// ExpectDeletions records Pods about to be deleted. A deletion needs no
// resourceVersion: the Pod was in the cache, and a relist reports it as
// updated (terminating) or as deleted, so its event always comes.
func (e *Expectations) ExpectDeletions(job string, pods ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(job).deletes.Insert(pods...)
}

// CreationObserved is called when the cache shows a Pod, or when its
// creation failed and will not be seen.
func (e *Expectations) CreationObserved(job, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.jobs[job]; ok {
		x.creates.Delete(pod)
	}
}

// DeletionObserved is called when the cache loses a Pod, or when its
// deletion failed and will not be seen.
func (e *Expectations) DeletionObserved(job, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.jobs[job]; ok {
		x.deletes.Delete(pod)
	}
}

// Satisfied reports whether the cache has caught up with this controller's
// own writes for the job.
func (e *Expectations) Satisfied(job string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.jobs[job]
	if !ok {
		return true
	}
	if x.creates.Len() > 0 && x.createdRV != "" && e.readPast != nil && e.readPast(x.createdRV) {
		// The cache shows every Pod created, or shows it gone again: the
		// events still awaited may never come (a relist skips a Pod
		// created and deleted while the watch was down).
		x.creates.Clear()
		x.createdRV = ""
	}
	if x.creates.Len() == 0 && x.deletes.Len() == 0 {
		return true
	}
	return e.clock.Since(x.since) > expectationsTimeout
}

// Forget drops what is known of a job that no longer exists.
func (e *Expectations) Forget(job string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.jobs, job)
}
