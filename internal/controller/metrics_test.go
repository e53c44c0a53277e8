package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// The tests here read the package's metrics, which every test shares (none
// runs in parallel): they compare a series before and after.

// hist is one series of a histogram: how many observations, their sum.
type hist struct {
	count uint64
	sum   float64
}

func histOf(t *testing.T, vec *prometheus.HistogramVec, labels ...string) hist {
	t.Helper()
	m := &dto.Metric{}
	if err := vec.WithLabelValues(labels...).(prometheus.Metric).Write(m); err != nil {
		t.Fatal(err)
	}
	return hist{m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()}
}

func (h hist) minus(o hist) hist { return hist{h.count - o.count, h.sum - o.sum} }

func phaseHists(t *testing.T, ns string) map[string]hist {
	out := map[string]hist{}
	for _, p := range []string{PhaseWorkersCreated, PhaseWorkersRunning, PhaseLauncherRunning} {
		out[p] = histOf(t, startupPhase, ns, p)
	}
	return out
}

func at(t time.Time) metav1.Time { return metav1.NewTime(t) }

func runningSince(t time.Time) []corev1.ContainerStatus {
	return []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(t)}}}}
}

// The phases are read from the Pods' own times, not from when the
// reconcile ran, and observed once per attempt: not again on the next
// reconcile, nor by a new leader, nor by a reconcile whose status write
// failed.
func TestStartupPhasesComeFromThePodsTimesOncePerAttempt(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	failWrites := false
	f := newFixture(t, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if _, ok := obj.(*kubeflow.MPIJob); ok && failWrites {
				return errors.New("etcd is down")
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}, job)
	start := f.clock.Now()
	f.reconcile(t, job)
	// Worker 0 made 2 s after the start, worker 1 at 3 s; their sshd
	// started at 5 s and 7 s; the launcher's container at 9 s.
	for i, p := range []struct{ made, started time.Duration }{{2 * time.Second, 5 * time.Second}, {3 * time.Second, 7 * time.Second}} {
		name := builder.WorkerName(job, i)
		f.r.Expectations.CreationObserved("ns/pi", name)
		pod := &corev1.Pod{}
		if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, pod); err != nil {
			t.Fatal(err)
		}
		pod.CreationTimestamp = at(start.Add(p.made))
		if err := f.client.Update(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		f.updatePod(t, name, func(pod *corev1.Pod) {
			pod.Status.Phase = corev1.PodRunning
			pod.Status.ContainerStatuses = runningSince(start.Add(p.started))
		})
	}
	f.startLauncher(t, "pi-launcher-abcde", start.Add(time.Second))
	f.updatePod(t, "pi-launcher-abcde", func(p *corev1.Pod) { p.Status.ContainerStatuses = runningSince(start.Add(9 * time.Second)) })

	before, total, running := phaseHists(t, "ns"), startupTotal(t), testutil.ToFloat64(nsRunning.WithLabelValues("ns"))
	// The controller sees it all a minute late, and its first write fails.
	f.clock.SetTime(start.Add(time.Minute))
	failWrites = true
	if _, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}); err == nil {
		t.Fatal("reconcile succeeded though its status write failed")
	}
	if d := phaseHists(t, "ns")[PhaseWorkersCreated].minus(before[PhaseWorkersCreated]); d.count != 0 {
		t.Fatalf("phases observed though the Running transition was not written: %+v", d)
	}
	failWrites = false
	f.reconcile(t, job)
	if !isTrue(&f.job(t, job).Status, kubeflow.JobRunning) {
		t.Fatal("job not Running")
	}
	want := map[string]hist{
		PhaseWorkersCreated:  {1, 3}, // the last worker made at 3 s
		PhaseWorkersRunning:  {1, 4}, // its sshd at 7 s
		PhaseLauncherRunning: {1, 2}, // the launcher at 9 s
	}
	check := func(when string) {
		t.Helper()
		after := phaseHists(t, "ns")
		for p, w := range want {
			if d := after[p].minus(before[p]); d != w {
				t.Errorf("%s: phase %s observed %d times, %v s in all; want %d, %v s", when, p, d.count, d.sum, w.count, w.sum)
			}
		}
		if d := startupTotal(t).minus(total); d != (hist{1, 9}) {
			t.Errorf("%s: mpi_operator_job_startup_seconds got %+v, want one observation of 9 s", when, d)
		}
		if d := testutil.ToFloat64(nsRunning.WithLabelValues("ns")) - running; d != 1 {
			t.Errorf("%s: mpi_operator_namespace_jobs_running_total{namespace=ns} moved by %v, want 1", when, d)
		}
	}
	check("after the Running transition")

	f.clock.SetTime(start.Add(2 * time.Minute))
	f.reconcile(t, job)
	check("after a later reconcile")

	// A new leader: nothing remembered but what the API holds.
	f.r = &Reconciler{
		Client: f.client, APIReader: f.client, Clock: f.clock,
		Expectations: NewExpectations(f.clock), Options: f.r.Options, CreateParallelism: 4,
	}
	f.clock.SetTime(start.Add(3 * time.Minute))
	f.reconcile(t, job)
	check("after a new leader's reconcile")
}

func startupTotal(t *testing.T) hist {
	t.Helper()
	m := &dto.Metric{}
	if err := startupLatency.Write(m); err != nil {
		t.Fatal(err)
	}
	return hist{m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()}
}

func TestPhasesFollowOneAnother(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	cases := map[string]struct {
		st   startup
		want [3]time.Duration
	}{
		"in order": {startup{begin: t0, workersCreated: sec(1), workersRunning: sec(4), launcherRunning: sec(10)},
			[3]time.Duration{time.Second, 3 * time.Second, 6 * time.Second}},
		"a worker outlived a restart: made before the attempt began": {
			startup{begin: sec(100), workersCreated: sec(50), workersRunning: sec(104), launcherRunning: sec(110)},
			[3]time.Duration{0, 4 * time.Second, 6 * time.Second}},
		"the launcher ran before the last worker": {
			startup{begin: t0, workersCreated: sec(1), workersRunning: sec(8), launcherRunning: sec(6)},
			[3]time.Duration{time.Second, 7 * time.Second, 0}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, b, c := tc.st.phases()
			if got := [3]time.Duration{a, b, c}; got != tc.want {
				t.Errorf("phases = %v, want %v", got, tc.want)
			}
		})
	}
}

// Launcher attempts are counted from the launcher's counts in the status
// written, once, whichever replica writes them.
func TestLauncherAttemptsAreCountedOnceFromTheWrittenStatus(t *testing.T) {
	madeBefore, failedBefore := testutil.ToFloat64(launcherAttempts.WithLabelValues("ns")), testutil.ToFloat64(launcherFailures.WithLabelValues("ns"))
	f, job, start := runningJob(t, 3)
	expect := func(when string, made, failed float64) {
		t.Helper()
		if got := testutil.ToFloat64(launcherAttempts.WithLabelValues("ns")) - madeBefore; got != made {
			t.Errorf("%s: %v launcher attempts counted, want %v", when, got, made)
		}
		if got := testutil.ToFloat64(launcherFailures.WithLabelValues("ns")) - failedBefore; got != failed {
			t.Errorf("%s: %v failed launcher attempts counted, want %v", when, got, failed)
		}
	}
	expect("Running", 1, 0)

	// The first launcher Pod failed and the Job controller made a second.
	f.updateLauncher(t, func(l *batchv1.Job) { l.Status.Failed, l.Status.Active = 1, 1 })
	// A count-only change: noted by one reconcile, written by a later one.
	f.clock.SetTime(start.Add(5 * time.Minute))
	f.reconcile(t, job)
	f.clock.SetTime(start.Add(10 * time.Minute))
	f.reconcile(t, job)
	if rs := f.job(t, job).Status.ReplicaStatuses[kubeflow.MPIReplicaTypeLauncher]; rs.Failed != 1 {
		t.Fatalf("launcher failures written: %d, want 1", rs.Failed)
	}
	expect("after a retry", 2, 1)
	f.clock.SetTime(start.Add(15 * time.Minute))
	f.reconcile(t, job)
	f.r = &Reconciler{
		Client: f.client, APIReader: f.client, Clock: f.clock,
		Expectations: NewExpectations(f.clock), Options: f.r.Options, CreateParallelism: 4,
	}
	f.reconcile(t, job)
	expect("after later reconciles and a new leader", 2, 1)
}

func TestLauncherAttemptsFromTwoStatuses(t *testing.T) {
	launcher := func(sel string, active, succeeded, failed int32) *kubeflow.JobStatus {
		return &kubeflow.JobStatus{ReplicaStatuses: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaStatus{
			kubeflow.MPIReplicaTypeLauncher: {Selector: sel, Active: active, Succeeded: succeeded, Failed: failed},
		}}
	}
	cases := map[string]struct {
		observed, computed *kubeflow.JobStatus
		made, failed       float64
	}{
		"first launcher Pod":                    {&kubeflow.JobStatus{}, launcher("a", 1, 0, 0), 1, 0},
		"nothing new":                           {launcher("a", 1, 0, 0), launcher("a", 1, 0, 0), 0, 0},
		"a retry":                               {launcher("a", 1, 0, 0), launcher("a", 1, 0, 1), 1, 1},
		"two retries between writes":            {launcher("a", 1, 0, 0), launcher("a", 1, 0, 2), 2, 2},
		"succeeded: no new Pod":                 {launcher("a", 1, 0, 0), launcher("a", 0, 1, 0), 0, 0},
		"suspended: the Pod deleted, uncounted": {launcher("a", 1, 0, 0), launcher("a", 0, 0, 0), 0, 0},
		"resumed: a new Pod":                    {launcher("a", 0, 0, 0), launcher("a", 1, 0, 0), 1, 0},
		"a new launcher Job after a restart":    {launcher("a", 1, 0, 2), launcher("b", 1, 0, 0), 1, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := "attempts-" + name
			recordLauncherAttempts(ns, tc.observed, tc.computed)
			if got := testutil.ToFloat64(launcherAttempts.WithLabelValues(ns)); got != tc.made {
				t.Errorf("attempts = %v, want %v", got, tc.made)
			}
			if got := testutil.ToFloat64(launcherFailures.WithLabelValues(ns)); got != tc.failed {
				t.Errorf("failed attempts = %v, want %v", got, tc.failed)
			}
		})
	}
}

// Each transition written moves its per-namespace counter by one, and
// the outcomes observe the job's duration from its written times.
func TestTransitionsAreCountedByNamespace(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "transitions").Obj()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job.Status.StartTime = &metav1.Time{Time: start}
	job.Status.CompletionTime = &metav1.Time{Time: start.Add(90 * time.Second)}
	cases := []struct {
		t       transition
		counter prometheus.Counter
	}{
		{transition{Type: kubeflow.JobCreated}, nsCreated.WithLabelValues("transitions")},
		{transition{Type: kubeflow.JobSuspended}, nsSuspended.WithLabelValues("transitions")},
		{transition{Type: kubeflow.JobSuspended, Resumed: true}, nsResumed.WithLabelValues("transitions")},
		{transition{Type: kubeflow.JobRunning}, nsRunning.WithLabelValues("transitions")},
		{transition{Type: kubeflow.JobRestarting}, nsRestarted.WithLabelValues("transitions")},
		{transition{Type: kubeflow.JobSucceeded}, nsSucceeded.WithLabelValues("transitions")},
		{transition{Type: kubeflow.JobFailed, Reason: ReasonDeadlineExceeded}, nsFailed.WithLabelValues("transitions", ReasonDeadlineExceeded)},
	}
	for _, tc := range cases {
		recordTransition(job, tc.t, nil)
		if got := testutil.ToFloat64(tc.counter); got != 1 {
			t.Errorf("%s (resumed %t): counter = %v, want 1", tc.t.Type, tc.t.Resumed, got)
		}
	}
	for _, outcome := range []string{"succeeded", "failed"} {
		if got := histOf(t, jobDuration, "transitions", outcome); got != (hist{1, 90}) {
			t.Errorf("mpi_operator_job_duration_seconds{outcome=%s} = %+v, want one observation of 90 s", outcome, got)
		}
	}
	const want = `
# HELP mpi_operator_namespace_jobs_failed_total MPIJobs that failed, by namespace and reason.
# TYPE mpi_operator_namespace_jobs_failed_total counter
mpi_operator_namespace_jobs_failed_total{namespace="transitions",reason="DeadlineExceeded"} 1
`
	err := testutil.CollectAndCompare(nsFailed.WithLabelValues("transitions", ReasonDeadlineExceeded), strings.NewReader(want))
	if err != nil {
		t.Error(err)
	}
}

// A leader that takes over a job created under another shows its
// mpi_operator_job_info too: it was set on the Created transition only,
// which the new leader never writes.
func TestJobInfoForAJobCreatedUnderAnotherLeader(t *testing.T) {
	f, job, _ := running(t, testjob.MakeMPIJob("pi", "ns").Workers(2).Obj())
	forgetMetrics(job.Namespace, job.Name) // what the old leader's process held
	f.r = &Reconciler{Client: f.client, APIReader: f.client, Clock: f.clock, Expectations: NewExpectations(f.clock), Options: f.r.Options}
	f.reconcile(t, job)
	if got := testutil.ToFloat64(jobInfo.WithLabelValues("pi-launcher", "ns")); got != 1 {
		t.Errorf("mpi_operator_job_info of the job = %v after the new leader's reconcile, want 1", got)
	}
}
