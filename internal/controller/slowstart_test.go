package controller

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
)

func TestBatchSizes(t *testing.T) {
	cases := []struct {
		count, limit int
		want         []int
	}{
		{count: 0, limit: 150, want: nil},
		{count: 10, limit: 150, want: []int{10}}, // a small job: one round trip
		{count: 16, limit: 150, want: []int{16}},
		{count: 100, limit: 150, want: []int{16, 32, 52}},
		{count: 400, limit: 100, want: []int{16, 32, 64, 100, 100, 88}},
		{count: 5, limit: 2, want: []int{2, 2, 1}},
		{count: 3, limit: 0, want: []int{1, 1, 1}},
	}
	for _, tc := range cases {
		if got := batchSizes(tc.count, tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("batchSizes(%d, %d) = %v, want %v", tc.count, tc.limit, got, tc.want)
		}
	}
}

// TestSlowStartBatchStopsAfterARefusedBatch: a job whose Pods are all
// refused (a quota) makes one batch of requests, not a thousand; every
// call is made once.
func TestSlowStartBatchStopsAfterARefusedBatch(t *testing.T) {
	refused := errors.New("exceeded quota")
	for _, tc := range []struct {
		failAt, wantCalls int
	}{
		{failAt: 0, wantCalls: 16},
		{failAt: 20, wantCalls: 48},
		{failAt: -1, wantCalls: 1000},
	} {
		var calls atomic.Int64
		seen := make([]atomic.Bool, 1000)
		done, err := slowStartBatch(1000, 150, func(i int) error {
			calls.Add(1)
			if seen[i].Swap(true) {
				t.Errorf("call %d made twice", i)
			}
			if i == tc.failAt {
				return refused
			}
			return nil
		})
		if done != tc.wantCalls || int(calls.Load()) != tc.wantCalls {
			t.Errorf("failing at %d: %d calls made, %d reported, want %d", tc.failAt, calls.Load(), done, tc.wantCalls)
		}
		if (tc.failAt >= 0) != errors.Is(err, refused) {
			t.Errorf("failing at %d: err = %v", tc.failAt, err)
		}
	}
}
