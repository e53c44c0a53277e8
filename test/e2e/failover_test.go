//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// The operator as config/default deploys it: its namespace, and the Lease
// that its replicas elect a leader with.
const (
	operatorNamespace = "mpi-operator"
	operatorName      = "mpi-operator"
)

// failoverTimeout bounds each wait of the failover; a failure deadline,
// not a measurement.
const failoverTimeout = 2 * time.Minute

// TestLeaderFailoverFinishesTheJob: with two replicas running, the leader's
// Pod (the Lease's holder) is deleted while a job runs; the other replica
// takes the Lease and finishes the job. The launcher is held until the old
// leader is gone (it waits for a Service the test creates only then), so
// the job's end can only have been seen by the new leader.
func TestLeaderFailoverFinishesTheJob(t *testing.T) {
	ctx := context.Background()
	replicas := readyOperatorPods(t)
	// After a redeploy the Lease may still name a Pod that is gone until
	// it expires: wait for one of the running replicas to hold it.
	oldLeader := leaderPod(t, func(holder string) bool { return replicas[holder] })

	job := mpiJob(t, openMPI4, false, 2, "sh", "-c",
		"until getent hosts proceed >/dev/null; do sleep 1; done; exec mpirun -n 2 /opt/mpi/ranks")
	create(t, job)
	poll(t, "the job Running", func(ctx context.Context) (bool, error) {
		got := &kubeflow.MPIJob{}
		err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got)
		return err == nil && isTrue(got, kubeflow.JobRunning), err
	})

	// The leader releases the Lease as it stops, and the first replica to
	// ask takes it. The Pod the ReplicaSet makes at once to replace the
	// leader could ask first (either outcome is a working failover); held
	// Pending here, it cannot, so the test shows the standby taking over on
	// its own.
	uncordon := cordonNodes(t)
	t.Logf("deleting the leader %s", oldLeader)
	if err := clientset.CoreV1().Pods(operatorNamespace).Delete(ctx, oldLeader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	newLeader := leaderPod(t, func(holder string) bool { return holder != oldLeader })
	uncordon()
	if !replicas[newLeader] {
		t.Fatalf("the Lease went to %s, not to the standby replica that was running (%v)", newLeader, replicas)
	}
	t.Logf("%s leads now", newLeader)
	poll(t, "the old leader's Pod gone", func(ctx context.Context) (bool, error) {
		_, err := clientset.CoreV1().Pods(operatorNamespace).Get(ctx, oldLeader, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, err
		}
		return false, errors.New("still there")
	})

	proceed := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "proceed", Namespace: job.Namespace},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 1}}},
	}
	if err := k8s.Create(ctx, proceed); err != nil {
		t.Fatal(err)
	}
	expectRanksOn(t, job, workerNames(job, 2)...)
}

// readyOperatorPods waits until the operator's Deployment has two ready
// replicas and returns their names.
func readyOperatorPods(t *testing.T) map[string]bool {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace, Name: operatorName}, d); err != nil {
		t.Fatal(err)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Fatalf("the operator's Deployment asks for %v replicas, want 2 (hack/cluster/up.sh deploys config/default)", d.Spec.Replicas)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]bool{}
	poll(t, "two ready operator Pods", func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(operatorNamespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return false, err
		}
		clear(ready)
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && podReady(&p) {
				ready[p.Name] = true
			}
		}
		return len(ready) == 2, fmt.Errorf("ready: %v", ready)
	})
	return ready
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// leaderPod waits until the Lease is held by a Pod that ok accepts, and
// returns that Pod's name: controller-runtime's identity is the hostname,
// the Pod's name, then "_" and a random suffix.
func leaderPod(t *testing.T, ok func(holder string) bool) string {
	t.Helper()
	var holder string
	poll(t, "the leader", func(ctx context.Context) (bool, error) {
		lease := &coordinationv1.Lease{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: operatorName}, lease); err != nil {
			return false, err
		}
		holder = ""
		if lease.Spec.HolderIdentity != nil {
			holder, _, _ = strings.Cut(*lease.Spec.HolderIdentity, "_")
		}
		return holder != "" && ok(holder), fmt.Errorf("held by %q", holder)
	})
	return holder
}

// poll waits for cond, and fails the test with its last error after
// failoverTimeout.
func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, failoverTimeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last: %v)", what, last)
	}
}

// cordonNodes marks every schedulable node unschedulable, so no new Pod
// starts, and returns what undoes it (also run at cleanup).
func cordonNodes(t *testing.T) func() {
	t.Helper()
	ctx := context.Background()
	nodes, err := clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cordoned []string
	set := func(name string, unschedulable bool) error {
		patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, unschedulable)
		_, err := clientset.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	undo := func() {
		for _, name := range cordoned {
			if err := set(name, false); err != nil {
				t.Errorf("uncordoning %s: %v", name, err)
			}
		}
		cordoned = nil
	}
	t.Cleanup(undo)
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			continue
		}
		if err := set(n.Name, true); err != nil {
			t.Fatalf("cordoning %s: %v", n.Name, err)
		}
		cordoned = append(cordoned, n.Name)
	}
	return undo
}
