package controller

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The metrics of this package. Upstream's names (jobs_created_total,
// jobs_successful_total, jobs_failed_total, job_info, is_leader) keep their
// labels, so dashboards made for kubeflow/mpi-operator keep working; the
// per-namespace series are new names beside them rather than a namespace
// label added to upstream's, which would split the series those
// dashboards graph. Reconcile errors and durations are controller-runtime's
// own controller_runtime_* metrics. docs/metrics.md is generated from what
// is registered here (hack/metricsdoc).
var (
	jobsCreated = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mpi_operator_jobs_created_total", Help: "MPIJobs accepted and started by the controller.",
	})
	jobsSucceeded = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mpi_operator_jobs_successful_total", Help: "MPIJobs that succeeded.",
	})
	jobsFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mpi_operator_jobs_failed_total", Help: "MPIJobs that failed, by reason.",
	}, []string{"reason"})
	jobsRestarted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mpi_operator_jobs_restarted_total", Help: "MPIJob restarts.",
	})
	// jobInfo is upstream's: 1 for each job, by launcher and namespace.
	// Unlike upstream's, a job's series goes away with the job.
	jobInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mpi_operator_job_info", Help: "Information about MPIJob: 1 per job, by launcher name and namespace.",
	}, []string{"launcher", "namespace"})
	// isLeader is upstream's: 1 while this replica holds the lease.
	isLeader = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mpi_operator_is_leader", Help: "1 while this replica is the leader of the mpi-operator replicas.",
	})
	startupLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "mpi_operator_job_startup_seconds",
		Help:    "Time from an MPIJob's start (creation or resume) until its workers and launcher run.",
		Buckets: phaseBuckets,
	})

	// Per namespace, one count per transition written to a job's status.
	nsCreated = namespaceCounter("created", "MPIJobs created (condition Created), by namespace.")
	nsRunning = namespaceCounter("running",
		"MPIJobs that became Running, by namespace: once per start, resume and restart.")
	nsSucceeded = namespaceCounter("successful", "MPIJobs that succeeded, by namespace.")
	nsFailed    = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mpi_operator_namespace_jobs_failed_total", Help: "MPIJobs that failed, by namespace and reason.",
	}, []string{"namespace", "reason"})
	nsRestarted = namespaceCounter("restarted", "MPIJob restarts after a worker was lost, by namespace.")
	nsSuspended = namespaceCounter("suspended", "MPIJobs suspended, by namespace.")
	nsResumed   = namespaceCounter("resumed", "MPIJobs resumed after a suspension, by namespace.")

	// startupPhase: one observation per phase and attempt, see startup.go.
	startupPhase = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mpi_operator_job_startup_phase_seconds",
		Help: "Duration of each startup phase of an MPIJob attempt, by namespace and phase: " +
			"workers_created (start to every worker Pod made), workers_running (to every worker Running), " +
			"launcher_running (to the launcher's container started).",
		Buckets: phaseBuckets,
	}, []string{"namespace", "phase"})
	jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mpi_operator_job_duration_seconds",
		Help: "Time from an MPIJob's start (its last start or resume) until it succeeded or failed, " +
			"by namespace and outcome.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 18),
	}, []string{"namespace", "outcome"})

	launcherAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mpi_operator_launcher_attempts_total",
		Help: "Launcher Pods the launcher Jobs made (one per attempt), by namespace.",
	}, []string{"namespace"})
	launcherFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mpi_operator_launcher_attempts_failed_total",
		Help: "Launcher Pods that failed, by namespace.",
	}, []string{"namespace"})
)

// phaseBuckets run from a quarter second to over an hour: an image pull or
// a queued job can take that long.
var phaseBuckets = prometheus.ExponentialBuckets(0.25, 2, 15)

// Phase names of mpi_operator_job_startup_phase_seconds.
const (
	PhaseWorkersCreated  = "workers_created"
	PhaseWorkersRunning  = "workers_running"
	PhaseLauncherRunning = "launcher_running"
)

func namespaceCounter(what, help string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mpi_operator_namespace_jobs_" + what + "_total", Help: help,
	}, []string{"namespace"})
}

// Collectors are this package's metrics, as registered with
// controller-runtime's registry: for the generated docs and the
// dashboard's test.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		jobsCreated, jobsSucceeded, jobsFailed, jobsRestarted, jobInfo, isLeader, startupLatency,
		nsCreated, nsRunning, nsSucceeded, nsFailed, nsRestarted, nsSuspended, nsResumed,
		startupPhase, jobDuration, launcherAttempts, launcherFailures,
	}
}

func init() {
	metrics.Registry.MustRegister(Collectors()...)
}

// LeaderGauge is a runnable for the manager: it runs only on the elected
// leader, and the gauge says so while it does.
func LeaderGauge() manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		isLeader.Set(1)
		<-ctx.Done()
		isLeader.Set(0)
		return nil
	})
}

// forgetMetrics drops the series of a job that no longer exists.
func forgetMetrics(namespace, name string) {
	jobInfo.DeleteLabelValues(name+"-launcher", namespace)
}
