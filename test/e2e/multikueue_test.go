//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/controller"
	"github.com/mpi-operator/mpi-operator/test/internal/kueueobj"
)

// The tests here submit MPIJobs to MultiKueue's manager cluster (make
// multikueue-up), which runs them on the local cluster, its worker. Like
// the Kueue tests they are not parallel.

// exampleMultiKueue, run by TestExampleKueue once its cluster-queue is
// there: upstream's pi.yaml with its queue label (kueue/pi.yaml),
// submitted to the manager set up as multikueue/manager-queues.yaml says, with the
// worker's LocalQueue of the same name in the same namespace. The job runs
// on the worker, its ranks on two distinct workers, and its Succeeded
// status and replica counts come back to the manager's MPIJob, where the
// manager's operator made nothing.
func exampleMultiKueue(t *testing.T) {
	m := requireManager(t)
	ns := newNamespace(t)
	createKueueObject(t, kueueObject("LocalQueue", ns, "user-queue", map[string]any{"spec": map[string]any{"clusterQueue": "cluster-queue"}}))
	managerNamespace(t, ns)
	applyExampleOn(t, m, ns, "multikueue/manager-queues.yaml")
	kueueobj.WaitActive(t, m.c, kueueObject("MultiKueueCluster", "", "worker1", nil))
	kueueobj.WaitActive(t, m.c, kueueObject("ClusterQueue", "", "cluster-queue", nil))

	jobs := applyExampleOn(t, m, ns, "kueue/pi.yaml")
	if len(jobs) != 1 {
		t.Fatalf("kueue/pi.yaml holds %d MPIJobs, want 1", len(jobs))
	}
	job := jobs[0]
	if got := ptr.Deref(job.Spec.RunPolicy.ManagedBy, ""); got != multiKueue {
		t.Errorf("the manager's MPIJob has runPolicy.managedBy %q, want %q (Kueue's webhook sets it)", got, multiKueue)
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	logs := followLauncher(ctx, job)

	got := waitOn(t, m, job, "Succeeded", func(j *kubeflow.MPIJob) (bool, error) {
		if j != nil && isTrue(j, kubeflow.JobFailed) {
			return false, fmt.Errorf("failed: %+v", condition(j, kubeflow.JobFailed))
		}
		return j != nil && isTrue(j, kubeflow.JobSucceeded), nil
	})
	out := <-logs
	t.Logf("the worker's launcher output:\n%s", out)
	expectPiOnTwoWorkers(t, out)
	if l := got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeLauncher]; l == nil || l.Succeeded != 1 {
		t.Errorf("the manager's launcher replica status is %+v, want 1 succeeded", l)
	}
	if w := got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeWorker]; w == nil {
		t.Errorf("the manager's MPIJob has no worker replica status: %+v", got.Status.ReplicaStatuses)
	}
	for rt, rs := range got.Status.ReplicaStatuses {
		t.Logf("the manager's MPIJob, %s: %+v", rt, *rs)
	}
	t.Logf("the manager's MPIJob, Succeeded: %+v", condition(got, kubeflow.JobSucceeded))
	expectNothingMadeOnManager(t, ns)
}

// expectNothingMadeOnManager: the manager's operator left the job alone:
// no Pod, launcher Job or Service in its namespace there.
func expectNothingMadeOnManager(t *testing.T, ns string) {
	t.Helper()
	m := requireManager(t).c
	ctx := context.Background()
	var pods corev1.PodList
	var jobs batchv1.JobList
	var svcs corev1.ServiceList
	for _, l := range []client.ObjectList{&pods, &jobs, &svcs} {
		if err := m.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(pods.Items) + len(jobs.Items) + len(svcs.Items); n > 0 {
		t.Errorf("the manager holds %d Pods, %d Jobs and %d Services in %s: its operator did not leave the job to MultiKueue",
			len(pods.Items), len(jobs.Items), len(svcs.Items), ns)
	}
}

// TestMultiKueueDeletionReachesTheWorker: a job deleted on the manager
// while it runs on the worker is removed from the worker, Pods and all.
func TestMultiKueueDeletionReachesTheWorker(t *testing.T) {
	m := requireManager(t)
	ns := newNamespace(t)
	queue := newMultiKueue(t, ns, kueueJobCPU, kueueJobCPU)
	job := queuedJob(ns, "deleted", queue, "sleep", "600")
	// sleep, the launcher's first process, ignores SIGTERM: with the
	// default grace period its Pod would take 30 s to go.
	job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	if err := m.c.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	waitOn(t, localCluster(), job, "Running on the worker", func(j *kubeflow.MPIJob) (bool, error) {
		return j != nil && isTrue(j, kubeflow.JobRunning), nil
	})
	if err := m.c.Delete(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	waitOn(t, localCluster(), job, "its removal from the worker", func(j *kubeflow.MPIJob) (bool, error) {
		return j == nil, nil
	})
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, job)
		return err == nil && len(pods) == 0, nil
	})
	if err != nil {
		t.Fatalf("the worker still has Pods of the deleted job: %v", err)
	}
	expectNothingMadeOnManager(t, ns)
}

// TestMultiKueueFailureComesBack: a job whose launcher fails on the worker
// shows Failed on the manager, with the worker's reason and message, which
// names the exit code: MultiKueue copies the worker's status once it is
// final, and deletes the worker's copy.
func TestMultiKueueFailureComesBack(t *testing.T) {
	m := requireManager(t)
	ns := newNamespace(t)
	queue := newMultiKueue(t, ns, kueueJobCPU, kueueJobCPU)
	job := queuedJob(ns, "fails", queue, "sh", "-c", "echo giving up; exit 3")
	job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](0)
	if err := m.c.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	var onWorker kubeflow.JobCondition
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The worker's copy goes once the manager has the outcome: its
		// condition is read while it is there.
		_ = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			w := &kubeflow.MPIJob{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), w); err != nil || !isTrue(w, kubeflow.JobFailed) {
				return false, nil
			}
			onWorker = condition(w, kubeflow.JobFailed)
			return true, nil
		})
	}()
	got := waitOn(t, m, job, "Failed", func(j *kubeflow.MPIJob) (bool, error) {
		if j != nil && isTrue(j, kubeflow.JobSucceeded) {
			return false, fmt.Errorf("succeeded")
		}
		return j != nil && isTrue(j, kubeflow.JobFailed), nil
	})
	c := condition(got, kubeflow.JobFailed)
	t.Logf("the manager's Failed condition: %s: %s", c.Reason, c.Message)
	if c.Reason != controller.ReasonBackoffLimitExceeded || !strings.Contains(c.Message, "exited with code 3") {
		t.Errorf("the manager's Failed condition is %+v, want %s naming the exit code", c, controller.ReasonBackoffLimitExceeded)
	}
	cancel()
	if onWorker.Reason != "" && (onWorker.Reason != c.Reason || onWorker.Message != c.Message) {
		t.Errorf("the worker's Failed condition was %s: %s; the manager shows %s: %s", onWorker.Reason, onWorker.Message, c.Reason, c.Message)
	}
}

// TestMultiKueueWaitsForTheWorkersQuota: with room on the manager but not
// in the worker's quota, the job waits suspended with no Pod on either
// cluster; once the worker's quota grows, it runs and succeeds.
func TestMultiKueueWaitsForTheWorkersQuota(t *testing.T) {
	m := requireManager(t)
	ns := newNamespace(t)
	queue := newMultiKueue(t, ns, kueueJobCPU, kueuePodCPU)
	job := queuedJob(ns, "waits", queue, "mpirun", "-n", "2", "/opt/mpi/ranks")
	if err := m.c.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	// The worker's Kueue has decided on the Workload MultiKueue copied
	// there: no quota. MultiKueue copies the job itself only to a worker
	// that reserved quota.
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(kueueAPI)
		list.SetKind("WorkloadList")
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil || len(list.Items) == 0 {
			return false, nil
		}
		status, reason, msg := kueueCondition(&list.Items[0], "QuotaReserved")
		if status == "True" {
			return false, fmt.Errorf("the worker gave the job quota it does not have: %s", msg)
		}
		if status == "False" {
			t.Logf("the worker's Workload %s: QuotaReserved False, %s: %s", list.Items[0].GetName(), reason, msg)
		}
		return status == "False", nil
	})
	if err != nil {
		t.Fatalf("waiting for the worker's decision on quota: %v", err)
	}
	for _, cl := range []cluster{m, localCluster()} {
		j := &kubeflow.MPIJob{}
		err := cl.c.Get(context.Background(), client.ObjectKeyFromObject(job), j)
		switch {
		case apierrors.IsNotFound(err) && cl.name != m.name:
		case err != nil:
			t.Fatalf("reading the job on the %s: %v", cl.name, err)
		case !j.IsSuspended():
			t.Errorf("the job runs on the %s without the worker's quota", cl.name)
		}
		pods, err := podsIn(context.Background(), cl, ns)
		if err != nil {
			t.Fatal(err)
		}
		if len(pods) > 0 {
			t.Errorf("the %s holds %d Pods (%s, ...) of a job without quota", cl.name, len(pods), pods[0].Name)
		}
	}

	cq := kueueObject("ClusterQueue", "", ns, nil)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(cq), cq); err != nil {
		t.Fatal(err)
	}
	setQuota(t, cq, kueueJobCPU)
	got := waitOn(t, m, job, "Succeeded once the worker has room", func(j *kubeflow.MPIJob) (bool, error) {
		return j != nil && (isTrue(j, kubeflow.JobSucceeded) || isTrue(j, kubeflow.JobFailed)), nil
	})
	if !isTrue(got, kubeflow.JobSucceeded) {
		t.Fatalf("the job did not succeed: %+v", condition(got, kubeflow.JobFailed))
	}
}

// setQuota sets the CPU quota of a ClusterQueue newKueueQueue made.
func setQuota(t *testing.T, cq *unstructured.Unstructured, quota resource.Quantity) {
	t.Helper()
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	flavor := groups[0].(map[string]any)["flavors"].([]any)[0].(map[string]any)
	flavor["resources"] = []any{map[string]any{"name": "cpu", "nominalQuota": quota.String()}}
	if err := unstructured.SetNestedSlice(cq.Object, groups, "spec", "resourceGroups"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Update(context.Background(), cq); err != nil {
		t.Fatalf("raising the quota of ClusterQueue %s: %v", cq.GetName(), err)
	}
}
