//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/controller"
)

// The tests here run MPIJobs through a real Kueue (v0.17.0, its
// kubeflow.org/mpijob integration, started by hack/kueue/up.sh). They are
// not parallel: each sizes a queue against the cluster's free CPU.

// TestKueueHoldsTheJobBeyondQuota: with CPU quota for one job, Kueue
// admits the first of two jobs; the second stays suspended without a
// single Pod for as long as the first runs, then runs and succeeds.
func TestKueueHoldsTheJobBeyondQuota(t *testing.T) {
	requireKueue(t)
	ns := newNamespace(t)
	queue := newKueueQueue(t, ns, kueueJobCPU, nil)
	// The first job's ranks start 10 s after its launcher: time in which
	// an admitted second job would have made its Pods.
	first := queuedJob(ns, "first", queue, "sh", "-c", "sleep 10; exec mpirun -n 2 /opt/mpi/ranks")
	create(t, first)
	waitJob(t, first, "Running", func(j *kubeflow.MPIJob) (bool, error) { return isTrue(j, kubeflow.JobRunning), nil })

	second := queuedJob(ns, "second", queue, "mpirun", "-n", "2", "/opt/mpi/ranks")
	create(t, second)
	waitWorkload(t, second, "Kueue's decision on quota", func(wl *unstructured.Unstructured) (bool, error) {
		status, reason, msg := kueueCondition(wl, "QuotaReserved")
		if status == "True" {
			return false, fmt.Errorf("the second job was given quota while the first holds all of it: %s", msg)
		}
		if status == "False" {
			t.Logf("second job's Workload: QuotaReserved False, %s: %s", reason, msg)
		}
		return status == "False", nil
	})
	checks := 0
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		s := &kubeflow.MPIJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(second), s); err != nil {
			return false, nil
		}
		if !s.IsSuspended() {
			return false, fmt.Errorf("the second job was resumed while the first runs")
		}
		pods, err := jobPods(ctx, second)
		if err != nil {
			return false, nil
		}
		if len(pods) > 0 {
			return false, fmt.Errorf("the second job has %d Pods (%s, ...) while the first runs", len(pods), pods[0].Name)
		}
		checks++
		f := &kubeflow.MPIJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(first), f); err != nil {
			return false, nil
		}
		return isTrue(f, kubeflow.JobSucceeded) || isTrue(f, kubeflow.JobFailed), nil
	})
	if err != nil {
		t.Fatalf("while the first job ran: %v", err)
	}
	t.Logf("the second job had no Pod in %d checks while the first ran", checks)
	expectRanksOn(t, first, workerNames(first, 2)...)
	expectRanksOn(t, second, workerNames(second, 2)...)
}

// TestKueuePreemptsALowerPriorityJobWhichThenResumes: a job of higher
// priority submitted to a full queue makes Kueue preempt the running one,
// which is suspended with its workers gone; once the higher one is done,
// the preempted job runs again and succeeds, its retries untouched: being
// preempted is not a failure of its program.
func TestKueuePreemptsALowerPriorityJobWhichThenResumes(t *testing.T) {
	requireKueue(t)
	ns := newNamespace(t)
	lowPriority := newPriorityClass(t, ns+"-low", 100)
	highPriority := newPriorityClass(t, ns+"-high", 1000)
	queue := newKueueQueue(t, ns, kueueJobCPU, nil)

	// Its ranks start 20 s after its launcher, so it is still running
	// when the higher one comes. The shell, the container's first process,
	// ignores SIGTERM: the preempted launcher sleeps on through its grace
	// period and then runs mpirun, on the resumed job's workers if they
	// are up, in a Pod being deleted. Its exit must not end the job: the
	// Job controller does not count it and makes another launcher Pod
	// (succeeds; this test failed 4 runs of 5 when it did).
	low := queuedJob(ns, "low", queue, "sh", "-c", "sleep 20; exec mpirun -n 2 /opt/mpi/ranks")
	low.Labels[kueuePriorityLabel] = lowPriority
	low.Spec.RunPolicy.BackoffLimit = ptr.To[int32](1)
	create(t, low)
	waitJob(t, low, "Running", func(j *kubeflow.MPIJob) (bool, error) { return isTrue(j, kubeflow.JobRunning), nil })

	high := queuedJob(ns, "high", queue, "mpirun", "-n", "2", "/opt/mpi/ranks")
	high.Labels[kueuePriorityLabel] = highPriority
	create(t, high)

	waitWorkload(t, low, "Preempted", func(wl *unstructured.Unstructured) (bool, error) {
		j := &kubeflow.MPIJob{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(low), j); err == nil && isTrue(j, kubeflow.JobSucceeded) {
			return false, fmt.Errorf("the low job finished without being preempted")
		}
		status, reason, msg := kueueCondition(wl, "Preempted")
		if status == "True" {
			t.Logf("low job's Workload: Preempted, %s: %s", reason, msg)
		}
		return status == "True", nil
	})
	waitJob(t, low, "suspended with its workers gone", func(j *kubeflow.MPIJob) (bool, error) {
		if isTrue(j, kubeflow.JobSucceeded) {
			return false, fmt.Errorf("the low job finished before it was preempted")
		}
		if !j.IsSuspended() || !isTrue(j, kubeflow.JobSuspended) {
			return false, nil
		}
		launcher := &batchv1.Job{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: low.Name + "-launcher"}, launcher); err != nil {
			return false, nil
		}
		return ptr.Deref(launcher.Spec.Suspend, false) && len(workerPods(t, low)) == 0, nil
	})

	expectRanksOn(t, high, workerNames(high, 2)...)
	// Kueue admits the low job again once the high one is done.
	expectRanksOn(t, low, workerNames(low, 2)...)

	got := &kubeflow.MPIJob{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(low), got); err != nil {
		t.Fatal(err)
	}
	launcher := &batchv1.Job{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: low.Name + "-launcher"}, launcher); err != nil {
		t.Fatal(err)
	}
	if b := ptr.Deref(launcher.Spec.BackoffLimit, -1); b != 1 {
		t.Errorf("launcher Job's backoffLimit = %d after the preemption, want the MPIJob's 1", b)
	}
	if launcher.Status.Failed != 0 {
		t.Errorf("launcher Job counts %d failed attempts: the preempted attempt was taken for a failure", launcher.Status.Failed)
	}
	if rec, ok := got.Annotations[controller.AnnotationRestart]; ok {
		t.Errorf("the preemption was taken for a lost worker: restart recorded %s", rec)
	}
	if c := condition(got, kubeflow.JobRestarting); c.Type != "" {
		t.Errorf("the preemption restarted the job: %+v", c)
	}
	t.Logf("low job after preemption and resume: launcher Job backoffLimit %d, failed %d, succeeded %d",
		ptr.Deref(launcher.Spec.BackoffLimit, -1), launcher.Status.Failed, launcher.Status.Succeeded)
}

// TestKueueFlavorPlacesLauncherAndWorkersOnItsNode: a ResourceFlavor that
// names a node by label and tolerates its taint: Kueue writes its node
// selector and toleration into the admitted job's templates, and they
// reach the launcher and every worker, which all run on that node (the
// taint keeps any Pod without the toleration off it).
func TestKueueFlavorPlacesLauncherAndWorkersOnItsNode(t *testing.T) {
	requireKueue(t)
	ns := newNamespace(t)
	all := nodes(t)
	slices.SortFunc(all, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	node := all[len(all)-1].Name
	const key = "e2e.mpi-operator.kubeflow.org/kueue-flavor"
	labelAndTaint(t, node, key, ns)
	toleration := corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}
	queue := newKueueQueue(t, ns, kueueJobCPU, map[string]any{
		"nodeLabels": map[string]any{key: ns},
		"tolerations": []any{map[string]any{
			"key": toleration.Key, "operator": string(toleration.Operator), "value": toleration.Value, "effect": string(toleration.Effect),
		}},
	})

	job := queuedJob(ns, "mpi", queue, "mpirun", "-n", "2", "/opt/mpi/ranks")
	// Workers are kept after success (cleanPodPolicy None), to be looked at.
	job.Spec.RunPolicy.CleanPodPolicy = ptr.To(kubeflow.CleanPodPolicyNone)
	create(t, job)
	expectRanksOn(t, job, workerNames(job, 2)...)

	pods, err := jobPods(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]int{}
	for _, p := range pods {
		role := p.Labels[kubeflow.LabelJobRole]
		roles[role]++
		if p.Spec.NodeSelector[key] != ns {
			t.Errorf("%s Pod %s: nodeSelector %v lacks the flavor's %s=%s", role, p.Name, p.Spec.NodeSelector, key, ns)
		}
		if !slices.ContainsFunc(p.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.MatchToleration(&toleration) }) {
			t.Errorf("%s Pod %s: tolerations %v lack the flavor's %v", role, p.Name, p.Spec.Tolerations, toleration)
		}
		if p.Spec.NodeName != node {
			t.Errorf("%s Pod %s ran on %q, want the flavor's node %s", role, p.Name, p.Spec.NodeName, node)
		}
		if p.Labels[kueuePodSetLabel] != role {
			t.Errorf("%s Pod %s: label %s=%q, want %q (Kueue's template labels must reach the Pods)", role, p.Name, kueuePodSetLabel, p.Labels[kueuePodSetLabel], role)
		}
	}
	if roles["launcher"] != 1 || roles["worker"] != 2 {
		t.Errorf("Pods by role %v, want 1 launcher and 2 workers", roles)
	}
}

// TestKueueFinishedJobReportsNoActiveReplicas: once a queued job has
// Succeeded and its workers are deleted (cleanPodPolicy Running), its
// status counts no active launcher or worker, as upstream's does
// (`kubectl get mpijob` shows the count).
func TestKueueFinishedJobReportsNoActiveReplicas(t *testing.T) {
	requireKueue(t)
	ns := newNamespace(t)
	queue := newKueueQueue(t, ns, kueueJobCPU, nil)
	job := queuedJob(ns, "mpi", queue, "mpirun", "-n", "2", "/opt/mpi/ranks")
	create(t, job)
	expectRanksOn(t, job, workerNames(job, 2)...)
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return len(workerPods(t, job)) == 0, nil
	})
	if err != nil {
		t.Fatalf("worker Pods not deleted after success: %v", err)
	}
	var active map[kubeflow.MPIReplicaType]int32
	err = wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := &kubeflow.MPIJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return false, nil
		}
		active = map[kubeflow.MPIReplicaType]int32{}
		for role, s := range got.Status.ReplicaStatuses {
			if s != nil {
				active[role] = s.Active
			}
		}
		return active[kubeflow.MPIReplicaTypeLauncher] == 0 && active[kubeflow.MPIReplicaTypeWorker] == 0, nil
	})
	if err != nil {
		t.Errorf("a Succeeded job with its workers deleted still reports active replicas %v, want none", active)
	}
}

// labelAndTaint gives node the label key=value and the taint
// key=value:NoSchedule, both removed when the test ends.
func labelAndTaint(t *testing.T, node, key, value string) {
	t.Helper()
	taint := corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffectNoSchedule}
	editNode(t, node, func(n *corev1.Node) {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[key] = value
		n.Spec.Taints = append(n.Spec.Taints, taint)
	})
	t.Cleanup(func() {
		editNode(t, node, func(n *corev1.Node) {
			delete(n.Labels, key)
			n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.Key == key })
		})
	})
}

// editNode applies edit to the node, retrying on conflicts with the
// kubelet's own updates.
func editNode(t *testing.T, name string, edit func(*corev1.Node)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n := &corev1.Node{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			return false, nil
		}
		edit(n)
		return k8s.Update(ctx, n) == nil, nil
	})
	if err != nil {
		t.Fatalf("editing node %s: %v", name, err)
	}
}
