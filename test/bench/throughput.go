package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
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
	pt, start, err := e.startJobs(wctx, ns, jobs, workers)
	if err != nil {
		return res, err
	}
	deadline := time.Now().Add(15 * time.Minute)
	for time.Now().Before(deadline) && res.AllSucceeded == 0 {
		var list kubeflow.MPIJobList
		if err := e.c.List(ctx, &list, client.InNamespace(ns)); err == nil {
			running, succeeded := 0, 0
			for _, j := range list.Items {
				for _, c := range j.Status.Conditions {
					if c.Status != corev1.ConditionTrue {
						continue
					}
					switch c.Type {
					case kubeflow.JobRunning:
						running++
					case kubeflow.JobSucceeded:
						succeeded++
						running++ // it was Running before
					}
				}
			}
			if running >= jobs && res.AllRunning == 0 {
				res.AllRunning = time.Since(start)
			}
			if succeeded >= jobs {
				res.AllSucceeded = time.Since(start)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if res.AllSucceeded == 0 {
		return res, fmt.Errorf("not all %d jobs Succeeded", jobs)
	}
	res.WorkersCreated, _ = pt.latest(pt.seen, "worker", jobs*workers)
	res.WorkersRunning, _ = pt.latest(pt.running, "worker", jobs*workers)
	res.LaunchersCreated, _ = pt.latest(pt.seen, "launcher", jobs)
	res.LaunchersRunning, _ = pt.latest(pt.running, "launcher", jobs)
	if err := dropNamespace(ctx, e.cs, ns); err != nil {
		return res, err
	}
	res.Floor, err = e.floor(ctx, jobs*(workers+1)-1, 0, false)
	return res, err
}

// startJobs makes namespace ns, watches its Pods until ctx ends, and
// creates jobs MPIJobs of n workers at once. The watch's clock, returned,
// starts at the first create.
func (e *env) startJobs(ctx context.Context, ns string, jobs, n int) (*podTimes, time.Time, error) {
	if err := newNamespace(ctx, e.cs, ns); err != nil {
		return nil, time.Time{}, err
	}
	pt, err := watchPods(ctx, e.cs, ns, time.Now())
	if err != nil {
		return nil, time.Time{}, err
	}
	start := time.Now()
	pt.mu.Lock()
	pt.start = start
	pt.mu.Unlock()
	err = benchcluster.Parallel(jobs, 50, func(i int) error {
		job := benchJob(ns, int32(n))
		job.Name = fmt.Sprintf("job-%d", i)
		return e.c.Create(ctx, job)
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("creating jobs: %w", err)
	}
	return pt, start, nil
}
