package main

import (
	"context"
	"time"
)

// The kubelet notices that a container exited at its next relist of the
// runtime's containers, once a second (exitnotice.go). settle ends just
// after such a relist: the kubelets' count of running Pods changes at one.
// A run created as soon as settle returned would start at the same point
// of the relist's period every time, and its launcher's exit would be
// noticed after the same fraction of a second in every run: short in one
// session and long in the next, by the length of the job alone. Each run
// therefore starts at a point of its own: run i of n waits (i-1)/n of the
// period after settle, so the runs sample the period evenly and their
// median holds a typical notice, as a job created at any moment meets.
const relistPeriod = time.Second

// relistOffset is how long run i (from 1) of runs waits after settle.
func relistOffset(i, runs int) time.Duration {
	if runs < 1 {
		return 0
	}
	return time.Duration((i-1)%runs) * relistPeriod / time.Duration(runs)
}

// atOffset waits for the run's point of the relist's period: the one wait
// in this command that is on a clock, on purpose, not on a condition.
func atOffset(ctx context.Context, i, runs int) error {
	t := time.NewTimer(relistOffset(i, runs))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
