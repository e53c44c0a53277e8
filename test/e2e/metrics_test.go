//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// scrape reads one operator Pod's metrics through the API server's Pod
// proxy: the local cluster runs no kube-proxy, and the test's client is
// cluster admin.
func scrape(ctx context.Context, pod string) (map[string]*dto.MetricFamily, error) {
	raw, err := clientset.CoreV1().Pods(operatorNamespace).ProxyGet("http", pod, "8080", "metrics", nil).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", pod, err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("parsing the metrics of %s: %w", pod, err)
	}
	return families, nil
}

// leaderMetrics scrapes every running operator Pod and returns the metrics
// of the one whose mpi_operator_is_leader is 1: only the leader reconciles,
// so only it has the job metrics.
func leaderMetrics(ctx context.Context) (string, map[string]*dto.MetricFamily, error) {
	pods := &corev1.PodList{}
	if err := k8s.List(ctx, pods, client.InNamespace(operatorNamespace), client.MatchingLabels{"app.kubernetes.io/name": operatorName}); err != nil {
		return "", nil, err
	}
	var seen []string
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		families, err := scrape(ctx, p.Name)
		if err != nil {
			return "", nil, err
		}
		seen = append(seen, p.Name)
		if f := families["mpi_operator_is_leader"]; f != nil && len(f.Metric) == 1 && f.Metric[0].GetGauge().GetValue() == 1 {
			return p.Name, families, nil
		}
	}
	return "", nil, fmt.Errorf("no leader among the running operator Pods %v", seen)
}

// series finds the series of a family whose labels include want.
func series(families map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := families[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.Metric {
		for k, v := range want {
			if !hasLabel(m, k, v) {
				continue next
			}
		}
		return m
	}
	return nil
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.Label {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// phaseCounts returns the observations of each startup phase in ns, and
// their sum in seconds.
func phaseCounts(families map[string]*dto.MetricFamily, ns string) (map[string]uint64, float64) {
	counts, sum := map[string]uint64{}, 0.0
	for _, phase := range []string{"workers_created", "workers_running", "launcher_running"} {
		m := series(families, "mpi_operator_job_startup_phase_seconds", map[string]string{"namespace": ns, "phase": phase})
		if m != nil {
			counts[phase] = m.GetHistogram().GetSampleCount()
			sum += m.GetHistogram().GetSampleSum()
		}
	}
	return counts, sum
}

// TestMetricsShowTheJobsStartupPhases runs a real job and reads the
// leader's metrics endpoint while it runs and after it finished: each
// startup phase was observed once for the job's namespace, the outcome
// and the launcher attempt were counted, and the finished job reports no
// active replicas once its workers are deleted.
func TestMetricsShowTheJobsStartupPhases(t *testing.T) {
	t.Parallel()
	// The launcher holds until the test has read the metrics of the
	// running job.
	job := mpiJob(t, openMPI4, false, 2, "sh", "-c",
		"until getent hosts proceed >/dev/null; do sleep 1; done; exec mpirun -n 2 /opt/mpi/ranks")
	job.Spec.RunPolicy.CleanPodPolicy = ptr.To(kubeflow.CleanPodPolicyRunning)
	create(t, job)
	ns := job.Namespace
	running := &kubeflow.MPIJob{}
	poll(t, "the job Running", func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(job), running)
		return err == nil && isTrue(running, kubeflow.JobRunning), err
	})

	// During the run: the phases were observed with the Running write.
	var leader string
	poll(t, "the startup phases on the leader's endpoint", func(ctx context.Context) (bool, error) {
		var families map[string]*dto.MetricFamily
		var err error
		leader, families, err = leaderMetrics(ctx)
		if err != nil {
			return false, err
		}
		counts, sum := phaseCounts(families, ns)
		for phase, n := range counts {
			if n != 1 {
				return false, fmt.Errorf("%s: phase %s observed %d times, want 1", leader, phase, n)
			}
		}
		if len(counts) != 3 {
			return false, fmt.Errorf("%s: phases observed for %s: %v", leader, ns, counts)
		}
		// The phases come from the Pods' own times, which all lie
		// between the job's creation and its Running condition (whole
		// seconds, hence the second of slack).
		bound := condition(running, kubeflow.JobRunning).LastTransitionTime.Sub(running.CreationTimestamp.Time) + time.Second
		if time.Duration(sum*float64(time.Second)) > bound {
			t.Errorf("the phases sum to %.2fs, more than the %v from creation to Running", sum, bound)
		}
		t.Logf("leader %s: startup phases of %s: %v, %.2fs in all", leader, ns, counts, sum)
		return true, nil
	})

	proceed := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "proceed", Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 1}}},
	}
	if err := k8s.Create(context.Background(), proceed); err != nil {
		t.Fatal(err)
	}
	expectRanksOn(t, job, workerNames(job, 2)...)

	// After the run: the outcome counted, nothing observed twice.
	poll(t, "the outcome on the leader's endpoint", func(ctx context.Context) (bool, error) {
		now, families, err := leaderMetrics(ctx)
		if err != nil {
			return false, err
		}
		if now != leader {
			t.Fatalf("the leader changed from %s to %s during the test: its counters started again", leader, now)
		}
		byNS := map[string]string{"namespace": ns}
		checks := map[string]float64{
			"mpi_operator_namespace_jobs_created_total":    1,
			"mpi_operator_namespace_jobs_running_total":    1,
			"mpi_operator_namespace_jobs_successful_total": 1,
		}
		for name, want := range checks {
			m := series(families, name, byNS)
			if m == nil || m.GetCounter().GetValue() != want {
				return false, fmt.Errorf("%s{namespace=%s} = %v, want %v", name, ns, m.GetCounter().GetValue(), want)
			}
		}
		// A launcher Pod failing for a reason of the node's would be
		// retried: at least one attempt.
		if m := series(families, "mpi_operator_launcher_attempts_total", byNS); m.GetCounter().GetValue() < 1 {
			return false, fmt.Errorf("no launcher attempt counted in %s", ns)
		}
		d := series(families, "mpi_operator_job_duration_seconds", map[string]string{"namespace": ns, "outcome": "succeeded"})
		if d.GetHistogram().GetSampleCount() != 1 {
			return false, fmt.Errorf("job duration of %s observed %d times, want 1", ns, d.GetHistogram().GetSampleCount())
		}
		counts, _ := phaseCounts(families, ns)
		for phase, n := range counts {
			if n != 1 {
				t.Errorf("after the run, phase %s was observed %d times, want 1", phase, n)
			}
		}
		return true, nil
	})

	// Its workers deleted, the finished job counts no replica as active
	// (kubectl get mpijob showed RUNNING 2 on a Succeeded job).
	poll(t, "no active replicas on the finished job", func(ctx context.Context) (bool, error) {
		got := &kubeflow.MPIJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return false, err
		}
		for rt, rs := range got.Status.ReplicaStatuses {
			if rs.Active != 0 {
				return false, fmt.Errorf("%s active = %d", rt, rs.Active)
			}
		}
		return len(got.Status.ReplicaStatuses) == 2, fmt.Errorf("replica statuses %v", got.Status.ReplicaStatuses)
	})
}
