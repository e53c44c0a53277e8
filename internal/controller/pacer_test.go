package controller

import (
	"testing"
	"time"
)

func TestPacerBacksOffWhileChangesKeepComing(t *testing.T) {
	var p pacer
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if w := p.wait("ns/a", t0); w > 0 {
		t.Fatalf("wait before any write = %v, want none", w)
	}
	p.wrote("ns/a", t0, false) // the Created transition
	now := t0
	// Changes pending all the time: write as soon as allowed.
	var gaps []time.Duration
	for range 6 {
		w := p.wait("ns/a", now.Add(100*time.Millisecond))
		if w <= 0 {
			t.Fatalf("a count-only write right after a write is not held back (wait %v)", w)
		}
		next := now.Add(100*time.Millisecond + w)
		gaps = append(gaps, next.Sub(now))
		p.wrote("ns/a", next, true)
		now = next
	}
	want := []time.Duration{1, 2, 4, 8, 8, 8}
	for i := range want {
		if gaps[i] != want[i]*time.Second {
			t.Fatalf("gaps between writes = %v, want %v seconds", gaps, want)
		}
	}

	// A transition resets the gap.
	p.wrote("ns/a", now, false)
	if w := p.wait("ns/a", now); w != coalescePeriod {
		t.Errorf("wait after a transition = %v, want %v", w, coalescePeriod)
	}
	// So does a count-only change after a quiet spell.
	quiet := now.Add(time.Minute)
	if w := p.wait("ns/a", quiet); w > 0 {
		t.Errorf("wait after a quiet minute = %v, want none", w)
	}
	p.wrote("ns/a", quiet, true)
	if w := p.wait("ns/a", quiet); w != coalescePeriod {
		t.Errorf("wait after a lone change = %v, want %v", w, coalescePeriod)
	}
	// Jobs are paced apart, and forgotten.
	if w := p.wait("ns/b", quiet); w > 0 {
		t.Errorf("another job waits %v", w)
	}
	p.forget("ns/a")
	if w := p.wait("ns/a", quiet); w > 0 {
		t.Errorf("a forgotten job waits %v", w)
	}
}
