//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

func workerPods(t *testing.T, job *kubeflow.MPIJob) []corev1.Pod {
	t.Helper()
	pods, err := clientset.CoreV1().Pods(job.Namespace).List(context.Background(), metav1.ListOptions{
		LabelSelector: kubeflow.LabelJobName + "=" + job.Name + "," + kubeflow.LabelJobRole + "=worker",
	})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func TestWaitForWorkersReady(t *testing.T) {
	t.Parallel()
	job := mpiJob(t, openMPI4, false, 2, "mpirun", "-n", "2", "/opt/mpi/ranks")
	job.Spec.LauncherCreationPolicy = kubeflow.LauncherCreationPolicyWaitForWorkersReady
	create(t, job)
	expectRanksOn(t, job, workerNames(job, 2)...)
}

// TestWorkerStartingLateSpendsNoRetry: a worker whose container starts
// well after its Pod has an address (here after an init container of
// 15 s; in a cluster, an image pull) has no name in DNS until it runs, so
// the launcher, waiting for the names, does not run mpirun against a
// worker without sshd: ssh's 10 connection attempts, a second apart,
// would run out, and with one attempt allowed the job would fail.
func TestWorkerStartingLateSpendsNoRetry(t *testing.T) {
	t.Parallel()
	job := mpiJob(t, openMPI4, false, 2, "mpirun", "-n", "2", "/opt/mpi/ranks")
	refuseOnce(job)
	w := &job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template.Spec
	w.InitContainers = []corev1.Container{{
		Name: "slow-start", Image: w.Containers[0].Image, ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "15"},
	}}
	create(t, job)
	expectRanksOn(t, job, workerNames(job, 2)...)
}

// TestRunLauncherAsWorker: the launcher runs rank 0 itself and a rank on
// each worker, for every implementation, as root and not. The launcher is
// the first host of the hostfile, under its own hostname: Open MPI 5 and
// MPICH, given its Service name, took it for another host and ssh'd to
// it, where no sshd listens.
func TestRunLauncherAsWorker(t *testing.T) {
	for _, img := range []image{openMPI4, openMPI5, mpich} {
		for _, nonRoot := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nonroot=%t", img.name, nonRoot), func(t *testing.T) {
				t.Parallel()
				job := mpiJob(t, img, nonRoot, 2, "mpirun", "-n", "3", "/opt/mpi/ranks")
				job.Spec.RunLauncherAsWorker = ptr.To(true)
				create(t, job)
				expectRanksOn(t, job, append([]string{job.Name + "-launcher"}, workerNames(job, 2)...)...)
			})
		}
	}
}

func TestSuspendThenResume(t *testing.T) {
	t.Parallel()
	job := mpiJob(t, mpich, false, 2, "mpirun", "-n", "2", "/opt/mpi/ranks")
	job.Spec.RunPolicy.Suspend = ptr.To(true)
	create(t, job)
	// Suspended=True is written by a reconcile that saw the job suspended,
	// after it made (or kept) its children: any Pod it made exists by now.
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		got := &kubeflow.MPIJob{}
		return k8s.Get(ctx, client.ObjectKeyFromObject(job), got) == nil && isTrue(got, kubeflow.JobSuspended), nil
	})
	if err != nil {
		t.Fatalf("job never Suspended: %v", err)
	}
	if pods := workerPods(t, job); len(pods) != 0 {
		t.Fatalf("%d worker Pods exist while suspended", len(pods))
	}
	if pods := launcherPods(t, job); len(pods) != 0 {
		t.Fatalf("%d launcher Pods exist while suspended", len(pods))
	}
	// The Job controller makes launcher Pods later, from a launcher Job:
	// one that exists must be suspended.
	l := &batchv1.Job{}
	switch err := k8s.Get(context.Background(), client.ObjectKey{Namespace: job.Namespace, Name: job.Name + "-launcher"}, l); {
	case apierrors.IsNotFound(err):
	case err != nil:
		t.Fatal(err)
	case !ptr.Deref(l.Spec.Suspend, false):
		t.Fatal("the launcher Job of a suspended MPIJob is not suspended")
	}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"runPolicy":{"suspend":false}}}`))
	if err := k8s.Patch(context.Background(), job, patch); err != nil {
		t.Fatal(err)
	}
	expectRanksOn(t, job, workerNames(job, 2)...)
}

func TestScaleUpAddsAWorkerToTheHostfile(t *testing.T) {
	t.Parallel()
	// The launcher waits until the hostfile lists 3 hosts, then uses them.
	job := mpiJob(t, openMPI4, false, 2, "sh", "-c",
		`until [ "$(wc -l < /etc/mpi/hostfile)" -ge 3 ]; do sleep 1; done; exec mpirun -n 3 /opt/mpi/ranks`)
	create(t, job)
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, jobTimeout, true, func(ctx context.Context) (bool, error) {
		got := &kubeflow.MPIJob{}
		return k8s.Get(ctx, client.ObjectKeyFromObject(job), got) == nil && isTrue(got, kubeflow.JobRunning), nil
	})
	if err != nil {
		t.Fatalf("job never Running: %v", err)
	}
	// What `kubectl scale mpijob/mpi --replicas=3` does.
	scale := &autoscalingv1.Scale{}
	if err := k8s.SubResource("scale").Get(context.Background(), job, scale); err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 3
	if err := k8s.SubResource("scale").Update(context.Background(), job, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	expectRanksOn(t, job, workerNames(job, 3)...)
}

func TestCleanPodPolicyRunningRemovesWorkers(t *testing.T) {
	t.Parallel()
	job := mpiJob(t, openMPI5, true, 2, "mpirun", "-n", "2", "/opt/mpi/ranks")
	job.Spec.RunPolicy.CleanPodPolicy = ptr.To(kubeflow.CleanPodPolicyRunning)
	create(t, job)
	expectRanksOn(t, job, workerNames(job, 2)...)
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		return len(workerPods(t, job)) == 0, nil
	})
	if err != nil {
		t.Errorf("worker Pods still exist after success: %d", len(workerPods(t, job)))
	}
	if len(launcherPods(t, job)) == 0 {
		t.Error("the launcher Pod (and its logs) went with the workers")
	}
}

func TestLauncherRetriedUpToBackoffLimit(t *testing.T) {
	t.Parallel()
	job := mpiJob(t, openMPI4, false, 1, "sh", "-c", "echo attempt; exit 3")
	job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](1)
	job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].RestartPolicy = kubeflow.RestartPolicyNever
	create(t, job)
	got := waitFinished(t, job)
	c := condition(got, kubeflow.JobFailed)
	if c.Status != corev1.ConditionTrue || c.Reason != "BackoffLimitExceeded" {
		t.Fatalf("Failed condition = %+v, want True BackoffLimitExceeded", c)
	}
	pods := launcherPods(t, job)
	if n := len(pods); n != 2 {
		t.Errorf("%d launcher attempts, want 2 (1 + backoffLimit 1)", n)
	}
	if !strings.Contains(c.Message, "exited with code 3") {
		t.Errorf("Failed condition does not say how the attempt failed: %q", c.Message)
	}
	// The last lines of the failed attempt's log outlive its Pod, in the
	// MPIJob's Failed event.
	for _, p := range pods {
		if err := clientset.CoreV1().Pods(job.Namespace).Delete(context.Background(), p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true, func(context.Context) (bool, error) {
		return len(launcherPods(t, job)) == 0, nil
	})
	if err != nil {
		t.Fatalf("launcher Pods not gone: %v", err)
	}
	events, err := clientset.CoreV1().Events(job.Namespace).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=MPIJob,involvedObject.name=" + job.Name,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "BackoffLimitExceeded" && strings.Contains(e.Message, "Last lines of the log of") && strings.Contains(e.Message, "\nattempt\n") {
			t.Logf("Failed event: %q", e.Message)
			return
		}
	}
	t.Errorf("no event of the MPIJob keeps the failed launcher's log; events: %+v", events.Items)
}

func TestProgramFailingWithPermanentExitCodeFailsAtOnce(t *testing.T) {
	t.Parallel()
	job := mpiJob(t, mpich, true, 2, "mpirun", "-n", "2", "sh", "-c", "exit 5")
	job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].RestartPolicy = kubeflow.RestartPolicyExitCode
	create(t, job)
	got := waitFinished(t, job)
	c := condition(got, kubeflow.JobFailed)
	if c.Status != corev1.ConditionTrue || c.Reason != "PodFailurePolicy" || !strings.Contains(c.Message, "exit code 5") {
		t.Fatalf("Failed condition = %+v, want True PodFailurePolicy naming exit code 5", c)
	}
	if n := len(launcherPods(t, job)); n != 1 {
		t.Errorf("%d launcher attempts, want 1: exit code 5 is permanent under ExitCode", n)
	}
}

// TestLostWorkerRestartsTheJob: a worker evicted, or deleted, while the
// ranks run ends that attempt; the job restarts as a whole on a
// replacement worker and succeeds, although backoffLimit 0 allows the
// program no failure: losing a worker is not the program's fault.
func TestLostWorkerRestartsTheJob(t *testing.T) {
	for name, lose := range map[string]func(ctx context.Context, ns, pod string) error{
		"evicted": func(ctx context.Context, ns, pod string) error {
			return clientset.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns}})
		},
		"deleted": func(ctx context.Context, ns, pod string) error {
			return clientset.CoreV1().Pods(ns).Delete(ctx, pod, metav1.DeleteOptions{})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			job := mpiJob(t, openMPI4, false, 2, "mpirun", "-n", "2", "sh", "-c", "echo "+rankStarted+"; sleep 15; exec /opt/mpi/ranks")
			job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](0)
			create(t, job)
			err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
				got := &kubeflow.MPIJob{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
					return false, nil
				}
				return isTrue(got, kubeflow.JobRunning), nil
			})
			if err != nil {
				t.Fatalf("job never ran: %v", err)
			}
			// Every rank has said it started (mpirun forwards the ranks'
			// output to the launcher's log): the ranks are sleeping now.
			waitInLauncherLog(t, job, rankStarted, 2)
			victim := workerNames(job, 2)[1]
			if err := lose(context.Background(), job.Namespace, victim); err != nil {
				t.Fatalf("losing %s: %v", victim, err)
			}
			expectRestartedThenRanksOn(t, job, workerNames(job, 2)...)
		})
	}
}

// rankStarted is what a rank of TestLostWorkerRestartsTheJob prints
// before it sleeps.
const rankStarted = "rank-started"

// waitInLauncherLog waits until the log of the job's last launcher Pod
// holds marker n times, and fails the test if the job finishes first.
func waitInLauncherLog(t *testing.T, job *kubeflow.MPIJob, marker string, n int) {
	t.Helper()
	var out string
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		got := &kubeflow.MPIJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return false, nil
		}
		finished := isTrue(got, kubeflow.JobSucceeded) || isTrue(got, kubeflow.JobFailed)
		out = launcherLogs(t, job)
		if strings.Count(out, marker) >= n {
			return true, nil
		}
		if finished {
			return false, fmt.Errorf("the job finished first: %+v", got.Status.Conditions)
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%q not %d times in the launcher's log: %v\n%s", marker, n, err, out)
	}
}

// expectRestartedThenRanksOn waits for the job to succeed with its ranks on
// hosts, checks it restarted on the way, and returns it.
func expectRestartedThenRanksOn(t *testing.T, job *kubeflow.MPIJob, hosts ...string) *kubeflow.MPIJob {
	t.Helper()
	expectRanksOn(t, job, hosts...)
	got := &kubeflow.MPIJob{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	if c := condition(got, kubeflow.JobRestarting); c.Type == "" {
		t.Errorf("no restart on record: %+v", got.Status.Conditions)
	}
	return got
}

// TestWorkerOutOfMemoryFailsAfterBackoffLimit: a worker whose container
// allocates 64 Mi under a 32 Mi limit is OOMKilled in every attempt.
// Under ExitCode each such failure restarts the job and spends a retry,
// so with backoffLimit 1 the job fails after 2 attempts, naming the
// worker and OOMKilled. Before, a retryable exit cost nothing and the job
// restarted until activeDeadlineSeconds.
func TestWorkerOutOfMemoryFailsAfterBackoffLimit(t *testing.T) {
	t.Parallel()
	job := mpiJob(t, openMPI4, false, 1, "sleep", "600")
	job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](1)
	job.Spec.RunPolicy.ActiveDeadlineSeconds = ptr.To[int64](int64(jobTimeout / time.Second))
	launcher := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher]
	launcher.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	w := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker]
	w.RestartPolicy = kubeflow.RestartPolicyExitCode
	c := &w.Template.Spec.Containers[0]
	c.Command = []string{"sh", "-c", "sleep 3; head -c 67108864 /dev/zero | tail"}
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")}
	create(t, job)
	got := waitFinished(t, job)
	f := condition(got, kubeflow.JobFailed)
	if f.Status != corev1.ConditionTrue || f.Reason != "BackoffLimitExceeded" {
		t.Fatalf("Failed condition %+v, want True BackoffLimitExceeded (conditions %+v)", f, got.Status.Conditions)
	}
	for _, want := range []string{"mpi-worker-0", "code 137", "OOMKilled"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("Failed message %q does not name %q", f.Message, want)
		}
	}
	var rec struct {
		Count int32 `json:"count"`
	}
	if err := json.Unmarshal([]byte(got.Annotations["mpi-operator.kubeflow.org/restart"]), &rec); err != nil || rec.Count != 1 {
		t.Errorf("restart record %q: %d restarts, want 1 (2 attempts for backoffLimit 1)", got.Annotations["mpi-operator.kubeflow.org/restart"], rec.Count)
	}
	t.Logf("Failed: %s", f.Message)
}
