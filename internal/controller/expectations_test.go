package controller

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestExpectations(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	e := NewExpectations(clk)
	if !e.Satisfied("ns/j") {
		t.Fatal("a job with no writes must be satisfied")
	}
	e.ExpectCreations("ns/j", "j-worker-0", "j-worker-1")
	e.ExpectDeletions("ns/j", "j-worker-5")
	e.CreationObserved("ns/j", "j-worker-0")
	if e.Satisfied("ns/j") {
		t.Fatal("satisfied with a creation and a deletion outstanding")
	}
	e.CreationObserved("ns/j", "j-worker-1")
	if e.Satisfied("ns/j") {
		t.Fatal("satisfied with a deletion outstanding")
	}
	if !e.Satisfied("ns/other") {
		t.Fatal("one job's expectations leaked into another's")
	}
	e.DeletionObserved("ns/j", "j-worker-5")
	if !e.Satisfied("ns/j") {
		t.Fatal("not satisfied after every write was observed")
	}

	e.ExpectCreations("ns/j", "j-worker-2")
	clk.SetTime(clk.Now().Add(expectationsTimeout + time.Second))
	if !e.Satisfied("ns/j") {
		t.Fatal("a lost event must not stall the job past the timeout")
	}
	e.Forget("ns/j")
	if !e.Satisfied("ns/j") {
		t.Fatal("forgotten job not satisfied")
	}
}
