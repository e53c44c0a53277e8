package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// workLeft says what the operator owes a job, as the chaos's cache shows
// it, or "" when it owes nothing: the job is final, or it waits on someone
// else (kwok stopping a Pod, garbage collection removing a former
// launcher's Pod, the simulated mpirun running).
//
// A job that is not suspended is owed work when a worker index has no Pod
// at all, when it has no launcher Job, when its launcher Job is
// suspended, when its launcher Job is finished but the MPIJob is not, or
// when it still says Suspended. A suspended job is owed work while a
// worker Pod is not being deleted, while its launcher Job runs, or until
// it says Suspended. A job with no condition at all is owed its first
// status. While any of the job's Pods is stopping, or a Pod of a former
// launcher Job remains, a job that is not suspended waits on others.
func workLeft(job *kubeflow.MPIJob, pods []*corev1.Pod, launcher *batchv1.Job) string {
	if final(job) != "" {
		return ""
	}
	if len(job.Status.Conditions) == 0 {
		return "no status"
	}
	if launcher != nil && launcher.DeletionTimestamp != nil {
		launcher = nil
	}
	if ptr.Deref(job.Spec.RunPolicy.Suspend, false) {
		for _, p := range pods {
			if p.Labels[kubeflow.LabelJobRole] == "worker" && p.DeletionTimestamp == nil {
				return "suspended, worker Pod left"
			}
		}
		if launcher != nil && !ptr.Deref(launcher.Spec.Suspend, false) && !jobFinished(launcher) {
			return "suspended, launcher Job not suspended"
		}
		if !hasCondition(job, kubeflow.JobSuspended) {
			return "suspended, not marked Suspended"
		}
		return ""
	}
	present := map[int]bool{}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			return ""
		}
		if p.Labels[kubeflow.LabelJobRole] == "launcher" && (launcher == nil || !ownedBy(p, launcher)) {
			return ""
		}
		if i, ok := workerIndex(job.Name, p.Name); ok {
			present[i] = true
		}
	}
	workers := int(ptr.Deref(job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Replicas, 1))
	for i := range workers {
		if !present[i] {
			return "worker Pod missing"
		}
	}
	switch {
	case launcher == nil:
		return "no launcher Job"
	case ptr.Deref(launcher.Spec.Suspend, false):
		return "launcher Job suspended"
	case jobFinished(launcher):
		return "launcher Job finished, MPIJob not"
	case hasCondition(job, kubeflow.JobSuspended):
		return "resumed, still marked Suspended"
	}
	return ""
}

func workerIndex(job, pod string) (int, bool) {
	rest, ok := strings.CutPrefix(pod, job+"-worker-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil
}

func ownedBy(p *corev1.Pod, l *batchv1.Job) bool {
	for _, ref := range p.OwnerReferences {
		if ref.UID == l.UID {
			return true
		}
	}
	return false
}

func jobFinished(l *batchv1.Job) bool {
	for _, c := range l.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func hasCondition(job *kubeflow.MPIJob, t kubeflow.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// final is the job's final condition, or "".
func final(job *kubeflow.MPIJob) kubeflow.JobConditionType {
	for _, t := range []kubeflow.JobConditionType{kubeflow.JobSucceeded, kubeflow.JobFailed} {
		if hasCondition(job, t) {
			return t
		}
	}
	return ""
}

// idleWatch samples every job each second. A job's idle stretch is the
// time since the later of (a) the first sample of an unbroken run of
// samples in which it had work left and (b) its last activity (observe.go):
// how long the operator has owed it something and nothing happened to it.
// The longest stretch of the run is kept, with the job and what was owed.
type idleWatch struct {
	mu        sync.Mutex
	since     map[string]time.Time
	longest   time.Duration
	job, owed string
	samples   int
	paused    bool
}

func newIdleWatch() *idleWatch { return &idleWatch{since: map[string]time.Time{}} }

// pause stops the sampling while the API server is down; resume restarts
// it and counts the moment it is back as activity of every job.
func (w *idleWatch) pause() {
	w.mu.Lock()
	w.paused = true
	w.mu.Unlock()
}

func (w *idleWatch) resume(ob *observer, at time.Time) {
	ob.touchAll(at)
	w.mu.Lock()
	w.paused = false
	for k, t := range w.since {
		if t.Before(at) {
			w.since[k] = at
		}
	}
	w.mu.Unlock()
}

// run samples until ctx ends (bounded by the run's own deadline).
func (w *idleWatch) run(ctx context.Context, ob *observer) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.mu.Lock()
		paused := w.paused
		w.mu.Unlock()
		if paused {
			continue
		}
		s, err := ob.snapshot(ctx)
		if err != nil {
			continue
		}
		now := time.Now()
		w.mu.Lock()
		w.samples++
		for _, job := range s.jobs {
			owed := workLeft(job, s.pods[job.Name], s.launchers[job.Name])
			if owed == "" {
				delete(w.since, job.Name)
				continue
			}
			start, ok := w.since[job.Name]
			if !ok {
				start = now
				w.since[job.Name] = now
			}
			if a := ob.lastActive(job.Name); a.After(start) {
				start = a
			}
			if idle := now.Sub(start); idle > w.longest {
				w.longest, w.job, w.owed = idle, job.Name, owed
			}
		}
		w.mu.Unlock()
	}
}

func (w *idleWatch) result() (time.Duration, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.job == "" {
		return 0, fmt.Sprintf("%d samples", w.samples)
	}
	return w.longest, fmt.Sprintf("job %s: %s; %d samples", w.job, w.owed, w.samples)
}
