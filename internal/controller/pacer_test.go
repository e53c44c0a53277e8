package controller

import (
	"testing"
	"time"
)

func TestPacerBatchesAndBacksOffWhileChangesKeepComing(t *testing.T) {
	var p pacer
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.wrote("ns/a", t0, false) // the Created transition
	now := t0
	// A change 100 ms after each write, pending until it is written.
	var gaps []time.Duration
	for range 6 {
		seen := now.Add(100 * time.Millisecond)
		w := p.due("ns/a", seen)
		if w <= 0 {
			t.Fatalf("a count-only change right after a write is written at once (due in %v)", w)
		}
		// Seen again later, it is still due at the same time.
		if w2 := p.due("ns/a", seen.Add(50*time.Millisecond)); w2 != w-50*time.Millisecond {
			t.Fatalf("due in %v, then 50 ms later in %v", w, w2)
		}
		next := seen.Add(w)
		gaps = append(gaps, next.Sub(now))
		p.wrote("ns/a", next, true)
		now = next
	}
	want := []time.Duration{1100, 2000, 4000, 8000, 8000, 8000}
	for i := range want {
		if gaps[i] != want[i]*time.Millisecond {
			t.Fatalf("gaps between writes = %v, want %v ms", gaps, want)
		}
	}

	// A transition resets the gap.
	p.wrote("ns/a", now, false)
	if w := p.due("ns/a", now); w != coalescePeriod {
		t.Errorf("due after a transition = %v, want %v", w, coalescePeriod)
	}
	p.wrote("ns/a", now, false)
	// A lone change after a quiet spell waits only for its batch, and
	// sets the gap back too.
	quiet := now.Add(time.Minute)
	if w := p.due("ns/a", quiet); w != coalescePeriod {
		t.Errorf("due after a quiet minute = %v, want the batch period %v", w, coalescePeriod)
	}
	p.wrote("ns/a", quiet.Add(coalescePeriod), true)
	if w := p.due("ns/a", quiet.Add(coalescePeriod)); w != coalescePeriod {
		t.Errorf("due after a lone change = %v, want %v", w, coalescePeriod)
	}
	// Jobs are paced apart, and forgotten.
	if w := p.due("ns/b", quiet); w != coalescePeriod {
		t.Errorf("another job's first change is due in %v, want %v", w, coalescePeriod)
	}
	p.forget("ns/a")
	if v, ok := p.jobs.Load("ns/a"); ok {
		t.Errorf("forgotten job still paced: %+v", v)
	}
}

// TestPacerWaitsLongerWhileAJobStarts: after a write of a job that is not
// Running yet, a count-only change waits startingGap, however the gap
// stood; the job's first write once it runs sets it back to
// coalescePeriod.
func TestPacerWaitsLongerWhileAJobStarts(t *testing.T) {
	var p pacer
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.wroteStarting("ns/a", t0, false) // Created
	if w := p.due("ns/a", t0.Add(100*time.Millisecond)); w != startingGap-100*time.Millisecond {
		t.Fatalf("a starting job's first count is due in %v, want %v after Created", w, startingGap)
	}
	// Its counts, written once due, keep the gap.
	at := t0.Add(startingGap)
	p.wroteStarting("ns/a", at, true)
	if w := p.due("ns/a", at.Add(time.Minute)); w != coalescePeriod {
		t.Fatalf("after a quiet minute, due in %v, want %v", w, coalescePeriod)
	}
	at = at.Add(time.Minute + coalescePeriod)
	p.wroteStarting("ns/a", at, true)
	if w := p.due("ns/a", at); w != startingGap {
		t.Fatalf("after a lone count of a starting job, due in %v, want %v", w, startingGap)
	}
	// Running is a transition written as any other.
	p.wrote("ns/a", at.Add(time.Second), false)
	if w := p.due("ns/a", at.Add(time.Second)); w != coalescePeriod {
		t.Errorf("a running job's count is due in %v, want %v", w, coalescePeriod)
	}
}
