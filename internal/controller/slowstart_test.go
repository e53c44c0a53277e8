package controller

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestSlowStartStopsAfterARefusal: a job whose Pods are all refused (a
// quota) makes one round of requests, not a thousand; no call starts once
// a refusal is seen; every call is made once, and the count returned is
// the calls made.
func TestSlowStartStopsAfterARefusal(t *testing.T) {
	refused := errors.New("exceeded quota")
	for _, tc := range []struct {
		name               string
		limit              int
		fails              func(i int) bool
		minCalls, maxCalls int
	}{
		{name: "all refused", limit: 150, fails: func(int) bool { return true }, minCalls: firstBatch, maxCalls: firstBatch},
		// One call at a time, so the refusal is seen before the next:
		// with more in flight, those that succeed meanwhile start more.
		{name: "the 21st refused, one at a time", limit: 1, fails: func(i int) bool { return i == 20 }, minCalls: 21, maxCalls: 21},
		{name: "none refused", limit: 150, fails: func(int) bool { return false }, minCalls: 1000, maxCalls: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			seen := make([]atomic.Bool, 1000)
			done, err := slowStart(1000, tc.limit, func(i int) error {
				calls.Add(1)
				if seen[i].Swap(true) {
					t.Errorf("call %d made twice", i)
				}
				if tc.fails(i) {
					return refused
				}
				return nil
			})
			if done != int(calls.Load()) || done < tc.minCalls || done > tc.maxCalls {
				t.Errorf("%d calls made, %d reported, want %d to %d", calls.Load(), done, tc.minCalls, tc.maxCalls)
			}
			for i := range done {
				if !seen[i].Load() {
					t.Errorf("call %d of the %d reported was never made", i, done)
				}
			}
			if (tc.maxCalls < 1000) != errors.Is(err, refused) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// TestSlowStartIsNotHeldBackByASlowCall: while the first call hangs, the
// others go on and their slots are reused, the calls in flight growing
// with each success. In batches (16, then 32 once all 16 returned), call
// 40 would wait for the first call; the test lets it hang for 2 s at
// most and fails if call 40 was not made meanwhile.
func TestSlowStartIsNotHeldBackByASlowCall(t *testing.T) {
	fortieth := make(chan struct{})
	var waitedInVain atomic.Bool
	done, err := slowStart(100, 150, func(i int) error {
		switch i {
		case 0:
			select {
			case <-fortieth:
			case <-time.After(2 * time.Second):
				waitedInVain.Store(true)
			}
		case 40:
			close(fortieth)
		}
		return nil
	})
	if err != nil || done != 100 {
		t.Fatalf("done %d, err %v", done, err)
	}
	if waitedInVain.Load() {
		t.Error("call 40 waited for the slow first call")
	}
}

// TestSlowStartKeepsToTheLimit: never more than limit calls in flight.
func TestSlowStartKeepsToTheLimit(t *testing.T) {
	var inFlight, most atomic.Int64
	done, err := slowStart(200, 20, func(int) error {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond) // let calls overlap
		inFlight.Add(-1)
		return nil
	})
	if err != nil || done != 200 {
		t.Fatalf("done %d, err %v", done, err)
	}
	if most.Load() > 20 {
		t.Errorf("%d calls in flight at once, limit 20", most.Load())
	}
}
