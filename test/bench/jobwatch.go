package main

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// jobTimes records, from a watch, when each MPIJob of a namespace was
// first seen Running (or past it) and Succeeded. A watch, not polling: an
// observer listing the MPIJobs every 0.2 s loaded the API server that the
// operator is measured on, and the floor has no such observer.
type jobTimes struct {
	mu        sync.Mutex
	start     time.Time
	running   map[string]time.Duration
	succeeded map[string]time.Duration
}

func watchJobs(ctx context.Context, cfg *rest.Config, ns string, start time.Time) (*jobTimes, error) {
	jt := &jobTimes{start: start, running: map[string]time.Duration{}, succeeded: map[string]time.Duration{}}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	inf := f.ForResource(kubeflow.GroupVersion.WithResource("mpijobs")).Informer()
	record := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		var job kubeflow.MPIJob
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &job) != nil {
			return
		}
		now := time.Since(jt.start)
		jt.mu.Lock()
		defer jt.mu.Unlock()
		for _, c := range job.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			switch c.Type {
			case kubeflow.JobRunning, kubeflow.JobSucceeded:
				if _, ok := jt.running[job.Name]; !ok {
					jt.running[job.Name] = now
				}
			}
			if _, ok := jt.succeeded[job.Name]; !ok && c.Type == kubeflow.JobSucceeded {
				jt.succeeded[job.Name] = now
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    record,
		UpdateFunc: func(_, obj any) { record(obj) },
	}); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return jt, nil
}

// restart sets the clock's zero.
func (jt *jobTimes) restart(start time.Time) {
	jt.mu.Lock()
	jt.start = start
	jt.mu.Unlock()
}

// all returns when the last of n jobs got there, and whether n did.
func (jt *jobTimes) all(times map[string]time.Duration, n int) (time.Duration, bool) {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	var last time.Duration
	for _, t := range times {
		last = max(last, t)
	}
	return last, len(times) >= n
}

// wait polls the recorded times (not the API server) until n jobs got
// there or the timeout passes.
func (jt *jobTimes) wait(ctx context.Context, times map[string]time.Duration, n int, timeout time.Duration) (time.Duration, bool) {
	deadline := time.Now().Add(timeout)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if t, ok := jt.all(times, n); ok {
			return t, true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, false
}
