package controller

import (
	gosync "sync"
)

// memory is everything the controller keeps per job between reconciles
// that is not in the API. All of it is a cache: a new leader starts with
// none of it and still does the right thing, only less thriftily (what
// must survive a failover is written to the API instead: durable.go).
// Losing each piece costs:
//   - Reconciler.Expectations (expectations.go): nothing; a new leader
//     lists every Pod before its first reconcile, so its cache is not
//     behind its own writes;
//   - statusPace, discoverPace, endpointPace (pacer.go): one count-only
//     write sooner;
//   - writtenOver: a status write that conflicts, and is retried;
//   - ungated: one patch that removes nothing;
//   - slicesWritten: an EndpointSlice write that finds the slice made or
//     changed, and is retried;
//   - cool (cooldown.go): one reconcile sooner.
type memory struct {
	// statusPace, discoverPace and endpointPace space out count-only
	// writes per job: of the status, discover_hosts.sh and the
	// EndpointSlices.
	statusPace, discoverPace, endpointPace pacer
	// writtenOver holds, per job, the resourceVersion our last status
	// write replaced: while the cache still serves it, a reconcile would
	// compute from stale status and its write would only conflict.
	writtenOver gosync.Map
	// ungated holds, per job, the UID of the launcher Pod whose workers
	// gate this controller removed last: while the cache still shows the
	// gate, the patch is not sent again (a gate never comes back).
	ungated gosync.Map
	// slicesWritten holds, per job, the resourceVersions of the
	// EndpointSlices this controller wrote last (sliceWrites), until the
	// cache shows them.
	slicesWritten gosync.Map
	// cool spaces out the reconciles that Pod events cause.
	cool cooldown
}

// forget drops what is remembered of a job that is gone.
func (r *Reconciler) forget(key string) {
	r.Expectations.Forget(key)
	r.mem.statusPace.forget(key)
	r.mem.discoverPace.forget(key)
	r.mem.endpointPace.forget(key)
	r.mem.writtenOver.Delete(key)
	r.mem.ungated.Delete(key)
	r.mem.slicesWritten.Delete(key)
	r.mem.cool.forget(key)
}
