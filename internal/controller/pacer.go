package controller

import (
	gosync "sync"
	"time"
)

// Writes that carry nothing but counts (running workers in the status, or
// in discover_hosts.sh) are paced per job; transitions are written at once.
// A count-only change waits coalescePeriod from when it was first seen, so
// changes that come together (the Job controller reporting its Pod, then
// its counts, then its condition) share a write, as the Job controller's
// own 1 s batching does. While changes keep coming, the gap between such
// writes doubles up to maxCoalescePeriod: a job whose 1000 workers start
// over 20 s costs 4 of them, not 20 (or 1000), and a job that is quiet
// again gets prompt updates.
//
// Until a job is Running its worker counts move with every Pod that
// starts, and the Running transition writes them all: so while it starts,
// count-only status writes wait startingGap from the last write. A job
// that starts within it writes Created and Running and no counts between
// (100 jobs of 8 wrote 6.7 status updates each while they started, 3.7 of
// them counts, and those writes slowed everyone's Pods); a slow start
// (image pulls, Pods waiting for room) still shows its progress in
// `kubectl get` every startingGap.
const (
	coalescePeriod    = time.Second
	maxCoalescePeriod = 8 * time.Second
	startingGap       = maxCoalescePeriod
)

// pacer remembers, per job, its last paced write, the gap before the next
// count-only one, and since when a count-only change has been waiting.
// The zero value is ready; it is safe for concurrent reconciles of
// different jobs.
type pacer struct{ jobs gosync.Map }

type pace struct {
	last, pendingSince time.Time
	gap                time.Duration
}

// due notes that a count-only change of key is waiting, and returns how
// long until it may be written (zero or less: now).
func (p *pacer) due(key string, now time.Time) time.Duration {
	pc := pace{}
	if v, ok := p.jobs.Load(key); ok {
		pc = v.(pace)
	}
	if pc.pendingSince.IsZero() {
		pc.pendingSince = now
		p.jobs.Store(key, pc)
	}
	return max(pc.last.Add(pc.gap).Sub(now), pc.pendingSince.Add(coalescePeriod).Sub(now))
}

// wrote records a write at now; nothing is waiting any more. A count-only
// write made while changes kept coming (soon after the gap ran out)
// doubles the gap; any other write sets it back to coalescePeriod.
func (p *pacer) wrote(key string, now time.Time, countsOnly bool) {
	p.record(key, now, countsOnly, coalescePeriod)
}

// wroteStarting is wrote for a job that is not Running yet: the next
// count-only write waits at least startingGap.
func (p *pacer) wroteStarting(key string, now time.Time, countsOnly bool) {
	p.record(key, now, countsOnly, startingGap)
}

// record is wrote with the least gap the next count-only write waits.
func (p *pacer) record(key string, now time.Time, countsOnly bool, least time.Duration) {
	gap := least
	if v, ok := p.jobs.Load(key); ok && countsOnly {
		pc := v.(pace)
		if now.Sub(pc.last) <= pc.gap+coalescePeriod {
			gap = max(least, min(2*pc.gap, maxCoalescePeriod))
		}
	}
	p.jobs.Store(key, pace{last: now, gap: gap})
}

func (p *pacer) forget(key string) { p.jobs.Delete(key) }
