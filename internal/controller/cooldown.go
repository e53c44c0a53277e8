package controller

import (
	gosync "sync"
	"time"
)

// A reconcile reads all of its job's Pods, so its cost grows with the
// job; and Pod events of a large job come in the thousands while it
// starts (scheduled, started, ready, for each worker). Reconciling on each
// of them costs N·N: a 1000-worker job took 751 reconciles and 6.45 CPU
// seconds (docs/records/benchmarks-history.md, "Reconciles of a large job
// spaced out"), though all but a few of those reconciles
// found nothing to write. So Pod events wait, after a reconcile of their
// job, cooldownPerWorker for each of its workers, and the events meanwhile
// share one reconcile. A reconcile costs about 9 µs per worker, so a
// job's reconciles then use at most a tenth of a core, whatever its size;
// a 10-worker job's events wait 1 ms, a 1000-worker job's 0.1 s (of the
// 18 s or more its Pods need to start).
// (A wait based on how long the last reconcile took would count its API
// calls too: creating 1000 Pods takes seconds.)
const cooldownPerWorker = 100 * time.Microsecond

// finishedCooldown is the least a finished job's Pod events wait: its
// outcome and final counts are written, its cleanup's deletes sent, and
// how its Pods go needs no prompt answer. The 10,000 Pods of a job with
// cleanPodPolicy All took minutes to go after it Succeeded, and its
// reconciles on their events, more than one a second, were a fifth of the
// operator's CPU meanwhile (a CPU profile, docs/records/scale-history.md).
const finishedCooldown = maxCoalescePeriod

// cooldown remembers, per job, when its last reconcile ended and how many
// workers it has. The zero value is ready; it is safe for concurrent use.
type cooldown struct{ jobs gosync.Map }

type lastReconcile struct {
	end      time.Time
	workers  int32
	finished bool
}

// done records a reconcile of key, a job of the given workers, ending at
// end, and whether the job is finished.
func (c *cooldown) done(key string, end time.Time, workers int32, finished bool) {
	c.jobs.Store(key, lastReconcile{end: end, workers: workers, finished: finished})
}

// wait returns how long a Pod event of key should wait before it is
// reconciled (zero or less: at once).
func (c *cooldown) wait(key string, now time.Time) time.Duration {
	v, ok := c.jobs.Load(key)
	if !ok {
		return 0
	}
	l := v.(lastReconcile)
	wait := time.Duration(l.workers) * cooldownPerWorker
	if l.finished {
		wait = max(wait, finishedCooldown)
	}
	return l.end.Add(wait).Sub(now)
}

func (c *cooldown) forget(key string) { c.jobs.Delete(key) }
