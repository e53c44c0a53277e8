package controller

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// startup is when each phase of an attempt's startup ended, read from the
// objects' own timestamps: the Pods' creationTimestamp, their containers'
// startedAt. The controller's clock appears only where an object carries
// no time, so a reconcile that runs late (a new leader taking over, a
// cache catching up) measures the same phases as one that ran at once.
//
// Each attempt is observed once: the phases are computed in the reconcile
// that sets Running and observed only after the status write carrying the
// Running transition succeeds (announce). That transition is written once
// per attempt, whichever replica leads: a conflicting write observes
// nothing and the retry recomputes the same times; a new leader finds
// Running already written and observes nothing. No marker is kept.
type startup struct {
	// begin is when the attempt started: the job's startTime (its
	// creation, or its resume), or the restart for a restarted job.
	begin time.Time
	// restart: the attempt follows a restart, not a start or resume.
	restart bool
	// workersCreated is when the last worker Pod was created.
	workersCreated time.Time
	// workersRunning is when the last worker's containers had started.
	workersRunning time.Time
	// launcherRunning is when the launcher's containers had started.
	launcherRunning time.Time
}

// startupOf reads the attempt's startup from the job and the Pods the
// cache shows, once every worker and the launcher run.
func startupOf(s *state, kids *children) *startup {
	st := &startup{begin: s.job.CreationTimestamp.Time}
	if t := s.status.StartTime; t != nil {
		st.begin = t.Time
	}
	if c := getCondition(s.status, kubeflow.JobRestarting); c != nil && c.Status == corev1.ConditionTrue {
		st.begin, st.restart = c.LastTransitionTime.Time, true
	}
	for i := range int(s.job.Workers()) {
		p := kids.workers[i]
		if p == nil {
			continue
		}
		st.workersCreated = later(st.workersCreated, p.CreationTimestamp.Time)
		st.workersRunning = later(st.workersRunning, startedAt(p, s.now.Time))
	}
	st.launcherRunning = s.now.Time
	for _, p := range kids.launcherPods {
		if isRunning(p) {
			st.launcherRunning = startedAt(p, s.now.Time)
			break
		}
	}
	return st
}

// phases returns the duration of each phase. The ends are made to follow
// one another: a worker that outlived a restart was created before the
// attempt began, and a launcher can start before the last worker runs.
func (st *startup) phases() (workersCreated, workersRunning, launcherRunning time.Duration) {
	created := later(st.begin, st.workersCreated)
	running := later(created, st.workersRunning)
	launched := later(running, st.launcherRunning)
	return created.Sub(st.begin), running.Sub(created), launched.Sub(running)
}

// total is the whole startup: from the attempt's beginning until its
// workers and launcher all run.
func (st *startup) total() time.Duration {
	a, b, c := st.phases()
	return a + b + c
}

// startedAt is when the Pod's containers had all started; or, for a Pod
// whose status carries no such time, now.
func startedAt(p *corev1.Pod, now time.Time) time.Time {
	var at time.Time
	for _, c := range p.Status.ContainerStatuses {
		r := c.State.Running
		if r == nil || r.StartedAt.IsZero() {
			return now
		}
		at = later(at, r.StartedAt.Time)
	}
	if at.IsZero() {
		return now
	}
	return at
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
