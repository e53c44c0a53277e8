package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestCreateMakesEveryChild(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("pi", ns).Workers(3).Slots(2).Obj())
	ctx := context.Background()

	pods := waitWorkers(t, job, 3)
	for _, p := range pods {
		if !metav1.IsControlledBy(&p, job) {
			t.Errorf("Pod %s is not controlled by the MPIJob", p.Name)
		}
		if p.Spec.Hostname != p.Name || p.Spec.Subdomain != "pi" {
			t.Errorf("Pod %s: hostname %q subdomain %q", p.Name, p.Spec.Hostname, p.Spec.Subdomain)
		}
		for _, l := range []string{kubeflow.LabelJobName, kubeflow.LabelOperatorName, kubeflow.LabelJobRole, kubeflow.LabelReplicaIndex} {
			if p.Labels[l] == "" {
				t.Errorf("Pod %s lacks label %s", p.Name, l)
			}
		}
	}
	l := launcherJob(t, job)
	if !metav1.IsControlledBy(l, job) || l.Spec.Template.Spec.AutomountServiceAccountToken == nil || *l.Spec.Template.Spec.AutomountServiceAccountToken {
		t.Errorf("launcher Job: controlled=%t automountServiceAccountToken=%v", metav1.IsControlledBy(l, job), l.Spec.Template.Spec.AutomountServiceAccountToken)
	}

	secret := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pi-ssh"}, secret); err != nil {
		t.Fatal(err)
	}
	if secret.Type != corev1.SecretTypeSSHAuth || secret.Immutable == nil || !*secret.Immutable || len(secret.Data[corev1.SSHAuthPrivateKey]) == 0 {
		t.Errorf("Secret: type %s immutable %v keys %d", secret.Type, secret.Immutable, len(secret.Data))
	}
	svc := &corev1.Service{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pi"}, svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("Service is not headless with not-ready addresses: %+v", svc.Spec)
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pi-config"}, cm); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range 3 {
		fmt.Fprintf(&want, "pi-worker-%d.pi.%s.svc.%s slots=2\n", i, ns, clusterDomain)
	}
	if diff := cmp.Diff(want.String(), cm.Data["hostfile"]); diff != "" {
		t.Errorf("hostfile (-want +got):\n%s", diff)
	}
	if kh, key := cm.Data["known_hosts"], strings.Fields(string(secret.Data["ssh-publickey"])); len(key) < 2 ||
		!strings.HasSuffix(kh, " "+key[0]+" "+key[1]+"\n") {
		t.Errorf("known_hosts %q does not pin the Secret's key %q", kh, secret.Data["ssh-publickey"])
	}

	got := waitCondition(t, job, kubeflow.JobCreated, corev1.ConditionTrue)
	if got.Status.StartTime == nil {
		t.Error("startTime not set")
	}
	if sel := got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeWorker].Selector; sel != builder.WorkerSelector(job).String() {
		t.Errorf("worker selector = %q", sel)
	}
}

func TestRunningThenSucceededCleansPods(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("ok", ns).Workers(2).CleanPodPolicy(kubeflow.CleanPodPolicyRunning).Obj())
	runWorkers(t, job, 2)
	launcherJob(t, job)
	startLauncher(t, job)
	got := waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionTrue)
	if rs := got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeWorker]; rs.Active != 2 {
		t.Errorf("worker active = %d, want 2", rs.Active)
	}

	finishLauncher(t, job, true, "", "")
	got = waitCondition(t, job, kubeflow.JobSucceeded, corev1.ConditionTrue)
	if got.Status.CompletionTime == nil {
		t.Error("completionTime not set")
	}
	if c := condition(got, kubeflow.JobRunning); c.Status != corev1.ConditionFalse {
		t.Errorf("Running is %s after success", c.Status)
	}
	waitWorkers(t, job, 0)
	waitEvents(t, job, "MPIJobCreated", "MPIJobRunning", "MPIJobSucceeded")
	// The workers it deleted are not active (kubectl get mpijob showed
	// RUNNING 2 on a Succeeded job), nor is the finished launcher.
	got, err := getJob(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	for rt, rs := range got.Status.ReplicaStatuses {
		if rs.Active != 0 {
			t.Errorf("%s active = %d on the finished job, want 0", rt, rs.Active)
		}
	}
	// The controller runs in this process: its metrics are in the
	// registry. Each startup phase was observed once for the namespace.
	for _, phase := range []string{"workers_created", "workers_running", "launcher_running"} {
		m := gathered(t, "mpi_operator_job_startup_phase_seconds", map[string]string{"namespace": ns, "phase": phase})
		if n := m.GetHistogram().GetSampleCount(); n != 1 {
			t.Errorf("startup phase %s observed %d times in %s, want 1", phase, n, ns)
		}
	}
	byNS := map[string]string{"namespace": ns}
	if v := gathered(t, "mpi_operator_namespace_jobs_successful_total", byNS).GetCounter().GetValue(); v != 1 {
		t.Errorf("mpi_operator_namespace_jobs_successful_total{namespace=%s} = %v, want 1", ns, v)
	}
	if n := gathered(t, "mpi_operator_job_duration_seconds", map[string]string{"namespace": ns, "outcome": "succeeded"}).GetHistogram().GetSampleCount(); n != 1 {
		t.Errorf("job duration observed %d times in %s, want 1", n, ns)
	}
}

// gathered returns the series of a metric of the in-process controller
// whose labels include want, or nil.
func gathered(t *testing.T, name string, want map[string]string) *dto.Metric {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

// waitEvents waits until the job has an event of each reason, emitted by
// the operator through the events.k8s.io API.
func waitEvents(t *testing.T, job *kubeflow.MPIJob, reasons ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("events %v", reasons), func(ctx context.Context) (bool, error) {
		var list eventsv1.EventList
		if err := k8s.List(ctx, &list, client.InNamespace(job.Namespace)); err != nil {
			return false, err
		}
		seen := map[string]bool{}
		for _, e := range list.Items {
			if e.Regarding.Name == job.Name && e.Regarding.Kind == kubeflow.Kind && e.ReportingController == "mpi-operator" {
				seen[e.Reason] = true
			}
		}
		for _, r := range reasons {
			if !seen[r] {
				return false, fmt.Errorf("no event %s among %v", r, seen)
			}
		}
		return true, nil
	})
}

func TestLauncherFailurePastBackoffLimitFailsJob(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("bad", ns).Workers(1).BackoffLimit(2).Obj())
	l := launcherJob(t, job)
	if l.Spec.BackoffLimit == nil || *l.Spec.BackoffLimit != 2 {
		t.Errorf("launcher backoffLimit = %v, want 2", l.Spec.BackoffLimit)
	}
	finishLauncher(t, job, false, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
	got := waitCondition(t, job, kubeflow.JobFailed, corev1.ConditionTrue)
	c := condition(got, kubeflow.JobFailed)
	if c.Reason != "BackoffLimitExceeded" || !strings.Contains(c.Message, "backoff limit") {
		t.Errorf("Failed condition: reason %q message %q", c.Reason, c.Message)
	}
	waitEvents(t, job, "BackoffLimitExceeded")
	// cleanPodPolicy defaults to None: the worker stays.
	consistently(t, "worker kept under cleanPodPolicy None", 500*1e6, func(ctx context.Context) (bool, error) {
		pods, err := workerPods(ctx, job)
		return len(pods) == 1, err
	})
}

// The Job controller reports status.ready in batches of a second; the
// operator reads the launcher Pod itself, so Running follows the Pod.
func TestRunningFollowsTheLauncherPod(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("fast", ns).Workers(1).Obj())
	runWorkers(t, job, 1)
	l := launcherJob(t, job)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "fast-launcher-abcde", Namespace: ns, Labels: l.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(l, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: l.Spec.Template.Spec,
	}
	if !builder.GatedOnWorkers(pod) {
		t.Fatal("the first launcher Job, made beside its worker, does not hold its Pod back")
	}
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	// The API server takes the operator's patch that removes its gate.
	eventually(t, "launcher Pod let go", func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		return err == nil && !builder.GatedOnWorkers(pod), err
	})
	setPodPhase(t, pod, corev1.PodRunning, true)
	got := waitCondition(t, job, kubeflow.JobRunning, corev1.ConditionTrue)
	if l := launcherJob(t, job); l.Status.Ready != nil && *l.Status.Ready > 0 {
		t.Fatal("launcher Job reported ready: the test no longer isolates the Pod path")
	}
	if rs := got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeWorker]; rs.Active != 1 {
		t.Errorf("worker active = %d", rs.Active)
	}
}
