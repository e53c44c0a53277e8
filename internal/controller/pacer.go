package controller

import (
	gosync "sync"
	"time"
)

// Writes that carry nothing but counts (running workers in the status, or
// in discover_hosts.sh) are paced per job; transitions are written at once.
// The first count-only write after any write waits coalescePeriod. While
// changes keep coming, each further gap doubles up to maxCoalescePeriod: a
// job whose 1000 workers start over 20 s costs 4 such writes, not 20 (or
// 1000), and a job that is quiet again gets prompt updates.
const (
	coalescePeriod    = time.Second
	maxCoalescePeriod = 8 * time.Second
)

// pacer remembers, per job, its last paced write and the gap before the
// next count-only one. The zero value is ready; it is safe for concurrent
// reconciles of different jobs.
type pacer struct{ jobs gosync.Map }

type pace struct {
	last time.Time
	gap  time.Duration
}

// wait returns how long a count-only write of key must still wait.
func (p *pacer) wait(key string, now time.Time) time.Duration {
	v, ok := p.jobs.Load(key)
	if !ok {
		return 0
	}
	pc := v.(pace)
	return pc.last.Add(pc.gap).Sub(now)
}

// wrote records a write at now. A count-only write made while changes were
// pending (soon after the gap ran out) doubles the gap; any other write
// sets it back to coalescePeriod.
func (p *pacer) wrote(key string, now time.Time, countsOnly bool) {
	gap := coalescePeriod
	if v, ok := p.jobs.Load(key); ok && countsOnly {
		pc := v.(pace)
		if now.Sub(pc.last) <= pc.gap+coalescePeriod {
			gap = min(2*pc.gap, maxCoalescePeriod)
		}
	}
	p.jobs.Store(key, pace{last: now, gap: gap})
}

func (p *pacer) forget(key string) { p.jobs.Delete(key) }
