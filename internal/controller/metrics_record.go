package controller

import (
	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// Metrics move only after the status write that carries what they count
// succeeded (writeStatus), and only for what that write changed: a write
// that conflicts counts nothing and its retry counts once, and a new
// leader, reading the status the old one wrote, never counts again what
// the old one did.

// noteJobInfo sets the job's mpi_operator_job_info.
func noteJobInfo(job *kubeflow.MPIJob) {
	jobInfo.WithLabelValues(builder.LauncherName(job), job.Namespace).Set(1)
}

// recordTransition counts one transition that was just written. st is how
// the attempt started, when t is the Running of this reconcile.
func recordTransition(job *kubeflow.MPIJob, t transition, st *startup) {
	ns := job.Namespace
	switch {
	case t.Resumed:
		nsResumed.WithLabelValues(ns).Inc()
	case t.Type == kubeflow.JobCreated:
		jobsCreated.Inc()
		nsCreated.WithLabelValues(ns).Inc()
		noteJobInfo(job)
	case t.Type == kubeflow.JobSucceeded:
		jobsSucceeded.Inc()
		nsSucceeded.WithLabelValues(ns).Inc()
		observeDuration(job, "succeeded")
	case t.Type == kubeflow.JobFailed:
		jobsFailed.WithLabelValues(t.Reason).Inc()
		nsFailed.WithLabelValues(ns, t.Reason).Inc()
		observeDuration(job, "failed")
	case t.Type == kubeflow.JobRestarting:
		jobsRestarted.Inc()
		nsRestarted.WithLabelValues(ns).Inc()
	case t.Type == kubeflow.JobSuspended:
		nsSuspended.WithLabelValues(ns).Inc()
	case t.Type == kubeflow.JobRunning:
		nsRunning.WithLabelValues(ns).Inc()
		observeStartup(ns, st)
	}
}

// observeStartup observes the phases of an attempt that now runs. The
// unlabelled total leaves restarts out, as it always has: it measures
// how long users wait for a job they started or resumed.
func observeStartup(ns string, st *startup) {
	if st == nil {
		return
	}
	created, running, launched := st.phases()
	startupPhase.WithLabelValues(ns, PhaseWorkersCreated).Observe(created.Seconds())
	startupPhase.WithLabelValues(ns, PhaseWorkersRunning).Observe(running.Seconds())
	startupPhase.WithLabelValues(ns, PhaseLauncherRunning).Observe(launched.Seconds())
	if !st.restart {
		startupLatency.Observe(st.total().Seconds())
	}
}

// observeDuration observes a finished job's run: from its startTime (its
// last start or resume; its creation if it never started) to its
// completionTime, both written in its status, so the figure is the same
// whichever replica writes the outcome.
func observeDuration(job *kubeflow.MPIJob, outcome string) {
	end := job.Status.CompletionTime
	if end == nil {
		return
	}
	start := job.CreationTimestamp.Time
	if st := job.Status.StartTime; st != nil {
		start = st.Time
	}
	jobDuration.WithLabelValues(job.Namespace, outcome).Observe(max(end.Sub(start).Seconds(), 0))
}

// recordLauncherAttempts counts the launcher Pods made and failed since
// the status written before. Within one launcher Job (one selector) its
// counts only grow (active+succeeded+failed grows by one per Pod made;
// a suspension, which deletes the Pod uncounted, lowers it and the Pod
// made on resume raises it again); a new launcher Job, after a restart,
// starts from zero under a new selector.
func recordLauncherAttempts(ns string, observed, computed *kubeflow.JobStatus) {
	cur := computed.ReplicaStatuses[kubeflow.MPIReplicaTypeLauncher]
	if cur == nil {
		return
	}
	made, failed := podsMade(cur), cur.Failed
	if prev := observed.ReplicaStatuses[kubeflow.MPIReplicaTypeLauncher]; prev != nil && prev.Selector == cur.Selector {
		made -= podsMade(prev)
		failed -= prev.Failed
	}
	if made > 0 {
		launcherAttempts.WithLabelValues(ns).Add(float64(made))
	}
	if failed > 0 {
		launcherFailures.WithLabelValues(ns).Add(float64(failed))
	}
}

func podsMade(rs *kubeflow.ReplicaStatus) int32 { return rs.Active + rs.Succeeded + rs.Failed }
