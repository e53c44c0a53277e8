package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// observer watches the run's MPIJobs and their children. It records, per
// job, the last moment something happened to it (its activity), which the
// idle check measures against.
type observer struct {
	cache cache.Cache

	mu sync.Mutex
	// active is the last activity of each job, by name.
	active map[string]time.Time
}

// Activity of a job is any of: a child (Pod, launcher Job, Service,
// ConfigMap, Secret) created or deleted, or its deletion requested; the
// launcher Job's spec or status changed (the operator suspends and
// resumes it, the Job controller reports its Pods); the MPIJob's status
// changed (only the operator writes it). A Pod's status changing is not:
// that is kwok's doing, not progress on work the operator owes.
func newObserver(ctx context.Context, e *env) (*observer, error) {
	ours := labels.SelectorFromSet(labels.Set{kubeflow.LabelOperatorName: kubeflow.OperatorName})
	byObject := map[client.Object]cache.ByObject{}
	for _, obj := range []client.Object{&corev1.Pod{}, &batchv1.Job{}, &corev1.Service{}, &corev1.ConfigMap{}, &corev1.Secret{}} {
		byObject[obj] = cache.ByObject{Label: ours}
	}
	c, err := cache.New(e.cfg, cache.Options{
		Scheme:            e.c.Scheme(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		ByObject:          byObject,
	})
	if err != nil {
		return nil, err
	}
	ob := &observer{cache: c, active: map[string]time.Time{}}
	child := func(obj any) {
		if o, ok := obj.(client.Object); ok {
			ob.touch(o.GetLabels()[kubeflow.LabelJobName])
		}
	}
	children := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { child(obj) },
		DeleteFunc: func(obj any) { child(unwrap(obj)) },
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(client.Object), newObj.(client.Object)
			if o.GetDeletionTimestamp() == nil && n.GetDeletionTimestamp() != nil {
				child(n)
			}
		},
	}
	for _, obj := range []client.Object{&corev1.Pod{}, &corev1.Service{}, &corev1.ConfigMap{}, &corev1.Secret{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(children); err != nil {
			return nil, err
		}
	}
	jobs, err := c.GetInformer(ctx, &batchv1.Job{})
	if err != nil {
		return nil, err
	}
	if _, err := jobs.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { child(obj) },
		DeleteFunc: func(obj any) { child(unwrap(obj)) },
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*batchv1.Job), newObj.(*batchv1.Job)
			if !equality.Semantic.DeepEqual(o.Spec, n.Spec) || !equality.Semantic.DeepEqual(o.Status, n.Status) ||
				(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				child(n)
			}
		},
	}); err != nil {
		return nil, err
	}
	mpijobs, err := c.GetInformer(ctx, &kubeflow.MPIJob{})
	if err != nil {
		return nil, err
	}
	if _, err := mpijobs.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { ob.touch(obj.(*kubeflow.MPIJob).Name) },
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*kubeflow.MPIJob), newObj.(*kubeflow.MPIJob)
			if !equality.Semantic.DeepEqual(o.Status, n.Status) {
				ob.touch(n.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !c.WaitForCacheSync(sctx) {
		return nil, fmt.Errorf("the chaos's cache did not sync")
	}
	return ob, nil
}

func unwrap(obj any) any {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

func (ob *observer) touch(job string) {
	if job == "" {
		return
	}
	ob.mu.Lock()
	ob.active[job] = time.Now()
	ob.mu.Unlock()
}

// touchAll counts as activity for every job: after the API server's
// outage, nothing could have happened while it was down.
func (ob *observer) touchAll(at time.Time) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	for k, t := range ob.active {
		if t.Before(at) {
			ob.active[k] = at
		}
	}
}

func (ob *observer) lastActive(job string) time.Time {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.active[job]
}

// snapshot is the cache's view of the run at one moment, grouped by job.
type snapshot struct {
	jobs      []*kubeflow.MPIJob
	pods      map[string][]*corev1.Pod
	launchers map[string]*batchv1.Job
}

func (ob *observer) snapshot(ctx context.Context) (snapshot, error) {
	var jobs kubeflow.MPIJobList
	var pods corev1.PodList
	var launchers batchv1.JobList
	for _, l := range []client.ObjectList{&jobs, &pods, &launchers} {
		if err := ob.cache.List(ctx, l, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
			return snapshot{}, err
		}
	}
	s := snapshot{pods: map[string][]*corev1.Pod{}, launchers: map[string]*batchv1.Job{}}
	for i := range jobs.Items {
		s.jobs = append(s.jobs, &jobs.Items[i])
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		job := p.Labels[kubeflow.LabelJobName]
		s.pods[job] = append(s.pods[job], p)
	}
	// A job's launcher is its newest launcher Job not being deleted: each
	// restart makes one of its own.
	for i := range launchers.Items {
		l := &launchers.Items[i]
		job := l.Labels[kubeflow.LabelJobName]
		if prev, ok := s.launchers[job]; l.DeletionTimestamp == nil && (!ok || prev.CreationTimestamp.Before(&l.CreationTimestamp)) {
			s.launchers[job] = l
		}
	}
	return s, nil
}
