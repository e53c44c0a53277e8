package controller

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

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

// Metrics of job outcomes; reconcile errors and durations come from
// controller-runtime's own controller_runtime_* metrics.
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
		Help:    "Time from an MPIJob's creation (or resume) until it is Running.",
		Buckets: prometheus.ExponentialBuckets(0.5, 2, 12),
	})
)

func init() {
	metrics.Registry.MustRegister(jobsCreated, jobsSucceeded, jobsFailed, jobsRestarted, jobInfo, isLeader, startupLatency)
}

// recordTransition counts one transition that was just written.
func recordTransition(job *kubeflow.MPIJob, t transition, now time.Time) {
	switch {
	case t.Resumed:
	case t.Type == kubeflow.JobCreated:
		jobsCreated.Inc()
		jobInfo.WithLabelValues(builder.LauncherName(job), job.Namespace).Set(1)
	case t.Type == kubeflow.JobSucceeded:
		jobsSucceeded.Inc()
	case t.Type == kubeflow.JobFailed:
		jobsFailed.WithLabelValues(t.Reason).Inc()
	case t.Type == kubeflow.JobRestarting:
		jobsRestarted.Inc()
	case t.Type == kubeflow.JobRunning && getCondition(&job.Status, kubeflow.JobRestarting) != nil:
		// Running again after a restart: not a startup.
	case t.Type == kubeflow.JobRunning:
		start := job.CreationTimestamp.Time
		if st := job.Status.StartTime; st != nil {
			start = st.Time
		}
		startupLatency.Observe(now.Sub(start).Seconds())
	}
}
