package controller

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// publishEndpoints writes the job's EndpointSlices: the addresses of its
// workers and of its current launcher's Pods, under their hostnames, for
// the Service that selects none (builder/endpoints.go says why). While
// Pods keep getting addresses, an addition is paced like discover_hosts.sh
// is: the launcher's wait-for-workers init container goes through the
// names as they appear. (Holding them all back until the set was complete
// coincided with the launcher's ssh failing to resolve a worker's name in
// 2 of 4 e2e runs; it was undone.) The write that completes the set, and
// any that removes or changes an address, goes out at once: the launcher
// waits for the last name, and a stale address must not outlive its Pod
// in DNS.
//
// A Service that selects its Pods (made by upstream's operator, or by an
// older version of this one) has them published by kube-controller-manager,
// and mayCreate is false for it: slices already made are still kept right,
// none is made. Nothing is read past the cache: a create that finds the
// slice made (the cache had not shown it yet), or an update that
// conflicts, is retried by the next reconcile.
func (r *Reconciler) publishEndpoints(ctx context.Context, s *state, kids *children, mayCreate bool) error {
	job := s.job
	var list discoveryv1.EndpointSliceList
	if err := r.Client.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabels{
		discoveryv1.LabelServiceName: builder.ServiceName(job), discoveryv1.LabelManagedBy: builder.EndpointSliceManager,
	}); err != nil {
		return fmt.Errorf("listing EndpointSlices: %w", err)
	}
	live := map[string]*discoveryv1.EndpointSlice{}
	var families []discoveryv1.AddressType
	for i := range list.Items {
		sl := &list.Items[i]
		if !metav1.IsControlledBy(sl, job) {
			continue
		}
		live[sl.Name] = sl
		if !slices.Contains(families, sl.AddressType) {
			families = append(families, sl.AddressType)
		}
	}
	if len(live) == 0 && !mayCreate {
		// kube-controller-manager publishes them, once they have
		// addresses: the launchers are told once every worker runs.
		if _, complete := kids.publishable(int(job.Workers())); complete {
			return r.tellLaunchers(ctx, kids)
		}
		return nil
	}
	if r.slicesBehind(jobKey(job), live, s.now.Time) {
		// The slice informer's event brings the next reconcile
		// (sliceWriteSeen); this one is in case it never comes.
		s.requeueAfter(sliceWriteWait)
		return nil
	}
	pods, complete := kids.publishable(int(job.Workers()))
	want := builder.EndpointSlices(job, pods, r.endpointsPerSlice(), families...)
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.Name] = true
	}
	// A slice no longer wanted (the job shrank) is emptied, not deleted:
	// the garbage collector removes it with the job.
	for name, sl := range live {
		if !wanted[name] && len(sl.Endpoints) > 0 {
			want = append(want, emptied(sl))
		}
	}
	changes, grows := endpointChanges(live, want)
	if len(changes) == 0 {
		if complete {
			return r.tellLaunchers(ctx, kids)
		}
		return nil
	}
	if grows && !complete {
		if wait := r.mem.endpointPace.due(jobKey(job), s.now.Time); wait > 0 {
			s.requeueAfter(wait)
			return nil
		}
	}
	// Sent with the status write (Reconciler.write): the write that
	// completes the set is due when the last Pod runs, and so is Running.
	s.endpointWrites = func(ctx context.Context) (bool, error) {
		retry, err := r.writeEndpointSlices(ctx, live, changes)
		if err == nil {
			r.mem.endpointPace.wrote(jobKey(job), s.now.Time, grows && !complete)
		}
		if err == nil && !retry && complete {
			err = r.tellLaunchers(ctx, kids)
		}
		r.mem.slicesWritten.Store(jobKey(job), sliceWrites{at: s.now.Time, rv: written(changes)})
		return retry, err
	}
	return nil
}

// sliceWriteWait bounds how long a reconcile waits for the cache to show
// the job's last slice writes: someone else may have written a slice
// since, and then the cache never shows them.
const sliceWriteWait = 2 * time.Second

// sliceWrites are the resourceVersions, by name, of the slices written at
// a time.
type sliceWrites struct {
	at time.Time
	rv map[string]string
}

// written are the resourceVersions of the slices written (those a write
// gave one).
func written(changes []*discoveryv1.EndpointSlice) map[string]string {
	rv := map[string]string{}
	for _, w := range changes {
		if w.ResourceVersion != "" {
			rv[w.Name] = w.ResourceVersion
		}
	}
	return rv
}

// slicesBehind reports whether the cache does not show yet the slices
// this controller wrote last for the job, for at most sliceWriteWait: the
// next reconcile (soon after, now that the last address goes out with
// Running) would write them again and be refused.
func (r *Reconciler) slicesBehind(key string, live map[string]*discoveryv1.EndpointSlice, now time.Time) bool {
	v, ok := r.mem.slicesWritten.Load(key)
	if !ok {
		return false
	}
	w := v.(sliceWrites)
	if now.Sub(w.at) < sliceWriteWait {
		for name, rv := range w.rv {
			if sl := live[name]; sl == nil || sl.ResourceVersion != rv {
				return true
			}
		}
	}
	r.mem.slicesWritten.Delete(key)
	return false
}

func emptied(sl *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	e := sl.DeepCopy()
	e.Endpoints = []discoveryv1.Endpoint{}
	return e
}

// writeEndpointSlices creates or updates each changed slice, at once. It
// reports whether a write found the cache behind the API (the slice
// already made, or changed since): the caller reconciles again soon.
func (r *Reconciler) writeEndpointSlices(ctx context.Context, live map[string]*discoveryv1.EndpointSlice, changes []*discoveryv1.EndpointSlice) (bool, error) {
	var behind atomic.Bool
	steps := make([]func() error, 0, len(changes))
	for _, w := range changes {
		steps = append(steps, func() error {
			h := live[w.Name]
			if h == nil {
				err := r.Client.Create(ctx, w)
				if apierrors.IsAlreadyExists(err) {
					behind.Store(true)
					return nil
				}
				if err != nil {
					return fmt.Errorf("creating EndpointSlice %s: %w", w.Name, err)
				}
				return nil
			}
			up := h.DeepCopy()
			up.Endpoints = w.Endpoints
			err := r.Client.Update(ctx, up)
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				behind.Store(true)
				return nil
			}
			if err != nil {
				return fmt.Errorf("updating EndpointSlice %s: %w", w.Name, err)
			}
			// Only a write that landed is one to wait for (written).
			w.ResourceVersion = up.ResourceVersion
			return nil
		})
	}
	err := concurrently(steps...)
	return behind.Load(), err
}

// publishable are the Pods the job's Service publishes, the launcher's
// first and then the workers by index, and whether every one of them
// that will run is published: every worker the job wants exists, and
// none of them or of the launcher's Pods waits for its address or, for a
// worker, for its containers to start (builder.Published).
func (k *children) publishable(n int) ([]*corev1.Pod, bool) {
	// A negative count, which the CRD refuses but a finished job is not
	// validated against again, publishes no worker.
	n = max(n, 0)
	complete := true
	pods := make([]*corev1.Pod, 0, n+len(k.launcherPods))
	for _, p := range k.launcherPods {
		pods = append(pods, p)
		complete = complete && !waitsToBePublished(p)
	}
	for i := range n {
		p := k.workers[i]
		if p == nil {
			complete = false
			continue
		}
		pods = append(pods, p)
		complete = complete && !waitsToBePublished(p)
	}
	return pods, complete
}

// waitsToBePublished reports whether a Pod will be published and is not
// yet: it has a hostname, and is neither finished nor being deleted.
func waitsToBePublished(p *corev1.Pod) bool {
	return p.Spec.Hostname != "" && !isTerminating(p) && !isPodFinished(p) && !builder.Published(p)
}

// endpointsPerSlice is how many endpoints one slice holds: the API's
// limit, so a 10,000-worker job has 10 slices to write, not the 100 of
// kube-controller-manager's default of 100 a slice.
func (r *Reconciler) endpointsPerSlice() int {
	if r.EndpointsPerSlice > 0 {
		return r.EndpointsPerSlice
	}
	return builder.MaxEndpointsPerSlice
}
