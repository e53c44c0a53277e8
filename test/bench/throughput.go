package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

// throughputResult is one run of many concurrent jobs.
type throughputResult struct {
	Jobs         int           `json:"jobs"`
	Workers      int           `json:"workersPerJob"`
	AllRunning   time.Duration `json:"allRunningNs"`
	AllSucceeded time.Duration `json:"allSucceededNs"`
	// Where the time goes: the last worker and launcher Pod created and
	// Running.
	WorkersCreated   time.Duration `json:"workersCreatedNs"`
	WorkersRunning   time.Duration `json:"workersRunningNs"`
	LaunchersCreated time.Duration `json:"launchersCreatedNs"`
	LaunchersRunning time.Duration `json:"launchersRunningNs"`
	Floor            time.Duration `json:"floorNs"`
	// DesignFloor is designFloor's: the same jobs' objects from a bare
	// client.
	DesignFloor time.Duration `json:"designFloorNs"`
}

// throughput creates jobs MPIJobs of workers each at once, in one
// namespace, and times until all are Running and all Succeeded (the
// simulated launcher completes 5 s after it runs). The floor is a bare
// client creating the same jobs*(workers+1) Pods.
func (e *env) throughput(ctx context.Context, jobs, workers int) (throughputResult, error) {
	res := throughputResult{Jobs: jobs, Workers: workers}
	ns := fmt.Sprintf("throughput-%dx%d", jobs, workers)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	from, err := e.audit.End()
	if err != nil {
		return res, err
	}
	jobRequests, err := e.requestsSince(ctx)
	if err != nil {
		return res, err
	}
	pt, jt, start, err := e.startJobs(wctx, ns, jobs, workers)
	if err != nil {
		return res, err
	}
	var ok bool
	if res.AllSucceeded, ok = jt.wait(ctx, jt.succeeded, jobs, 15*time.Minute); !ok {
		return res, fmt.Errorf("not all %d jobs Succeeded", jobs)
	}
	res.AllRunning, _ = jt.all(jt.running, jobs)
	res.WorkersCreated, _ = pt.latest(pt.seen, "worker", jobs*workers)
	res.WorkersRunning, _ = pt.latest(pt.running, "worker", jobs*workers)
	res.LaunchersCreated, _ = pt.latest(pt.seen, "launcher", jobs)
	res.LaunchersRunning, _ = pt.latest(pt.running, "launcher", jobs)
	if err := jobRequests("the MPIJobs' whole life"); err != nil {
		return res, err
	}
	if e.o.timeline {
		fmt.Printf("  %d × %d: workers %s\n", jobs, workers, pt.phases("worker", jobs*workers))
		if err := spread(e.audit, from, ns, start); err != nil {
			return res, err
		}
	}
	if err := dropNamespace(ctx, e.cs, ns); err != nil {
		return res, err
	}
	floorRequests, err := e.requestsSince(ctx)
	if err != nil {
		return res, err
	}
	if res.Floor, err = e.floor(ctx, jobs*(workers+1)-1, 0); err != nil {
		return res, err
	}
	if err := floorRequests("the floor"); err != nil {
		return res, err
	}
	designRequests, err := e.requestsSince(ctx)
	if err != nil {
		return res, err
	}
	if res.DesignFloor, err = e.designFloor(ctx, fmt.Sprintf("design-floor-%dx%d", jobs, workers), jobs, workers); err != nil {
		return res, err
	}
	return res, designRequests("the design floor")
}

// startJobs makes namespace ns, watches its Pods and MPIJobs until ctx
// ends, and creates jobs MPIJobs of n workers at once. The watches' clock,
// returned, starts at the first create.
func (e *env) startJobs(ctx context.Context, ns string, jobs, n int) (*podTimes, *jobTimes, time.Time, error) {
	if err := newNamespace(ctx, e.cs, ns); err != nil {
		return nil, nil, time.Time{}, err
	}
	pt, err := watchPods(ctx, e.cs, ns, time.Now())
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	jt, err := watchJobs(ctx, e.cfg, ns, time.Now())
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	start := time.Now()
	pt.mu.Lock()
	pt.start = start
	pt.mu.Unlock()
	jt.restart(start)
	err = benchcluster.Parallel(jobs, 50, func(i int) error {
		job := benchJob(ns, int32(n))
		job.Name = fmt.Sprintf("job-%d", i)
		return e.c.Create(ctx, job)
	})
	if err != nil {
		return nil, nil, time.Time{}, fmt.Errorf("creating jobs: %w", err)
	}
	return pt, jt, start, nil
}
