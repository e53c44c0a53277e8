//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/gang"
)

// TestNativeGangStartsNoPodUntilAllFit runs a job under Kubernetes' own
// gang scheduling (the Workload API, kube-scheduler's GangScheduling
// plugin) on the local cluster: while only two of its three Pods fit, none
// is placed (a scheduler without gangs would start two and leave them
// waiting for the third); once room is made, all three start and the job
// succeeds. It switches the cluster's operator to --gang-scheduling and
// back, so it runs alone (not in parallel).
func TestNativeGangStartsNoPodUntilAllFit(t *testing.T) {
	withOperatorArgs(t, "--gang-scheduling="+gang.Kubernetes)

	// Leave room for exactly one of the job's Pods on each node. A Pod asks
	// for 800m: with the blockers gone a node of 2 CPUs takes two of them
	// beside whatever else it runs (CoreDNS).
	var blockers []*corev1.Pod
	for _, node := range nodes(t) {
		free := freeCPU(t, node)
		free.Sub(podCPU)
		if free.Sign() <= 0 {
			continue
		}
		blockers = append(blockers, blocker(t, node.Name, free))
	}
	waitPods(t, "blockers Running", blockers, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	job := mpiJob(t, openMPI4, false, 2, "mpirun", "-n", "2", "/opt/mpi/ranks")
	for _, role := range []kubeflow.MPIReplicaType{kubeflow.MPIReplicaTypeLauncher, kubeflow.MPIReplicaTypeWorker} {
		c := &job.Spec.MPIReplicaSpecs[role].Template.Spec.Containers[0]
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: podCPU}
	}
	create(t, job)

	// The scheduler has looked at the whole gang and placed none of it.
	var gangPods []*corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, jobTimeout, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := k8s.List(ctx, &list, client.InNamespace(job.Namespace)); err != nil {
			return false, nil
		}
		gangPods = gangPods[:0]
		refused := 0
		for i := range list.Items {
			p := &list.Items[i]
			gangPods = append(gangPods, p)
			if p.Spec.NodeName != "" {
				return false, fmt.Errorf("pod %s was placed on %s while the gang cannot fit", p.Name, p.Spec.NodeName)
			}
			if unschedulable(p) {
				refused++
			}
		}
		return len(gangPods) == 3 && refused == 3, nil
	})
	if err != nil {
		t.Fatalf("waiting for the scheduler to refuse the whole gang: %v", err)
	}
	t.Logf("gang of %d Pods refused as a whole, none placed", len(gangPods))
	if got := &(kubeflow.MPIJob{}); k8s.Get(context.Background(), client.ObjectKeyFromObject(job), got) == nil && isTrue(got, kubeflow.JobRunning) {
		t.Errorf("job Running while no Pod of it is placed")
	}

	for _, b := range blockers {
		if err := k8s.Delete(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	expectRanksOn(t, job, workerNames(job, 2)...)
}

// podCPU is what each Pod of the gang asks for.
var podCPU = resource.MustParse("800m")

// unschedulable reports whether the scheduler refused the Pod.
func unschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

func nodes(t *testing.T) []corev1.Node {
	t.Helper()
	var list corev1.NodeList
	if err := k8s.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// freeCPU is the node's allocatable CPU less the requests of the Pods
// bound to it that still run or may run.
func freeCPU(t *testing.T, node corev1.Node) resource.Quantity {
	t.Helper()
	var pods corev1.PodList
	if err := k8s.List(context.Background(), &pods); err != nil {
		t.Fatal(err)
	}
	free := node.Status.Allocatable.Cpu().DeepCopy()
	for _, p := range pods.Items {
		if p.Spec.NodeName != node.Name || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Spec.Containers {
			free.Sub(*c.Resources.Requests.Cpu())
		}
	}
	return free
}

// blocker is a pause Pod on the node holding cpu.
func blocker(t *testing.T, node string, cpu resource.Quantity) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "blocker-", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{
				Name: "pause", Image: "mpi-operator.local/pause:e2e", ImagePullPolicy: corev1.PullNever,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: cpu}},
			}},
		},
	}
	if err := k8s.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), p) })
	return p
}

func waitPods(t *testing.T, what string, pods []*corev1.Pod, ok func(*corev1.Pod) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, jobTimeout, true, func(ctx context.Context) (bool, error) {
		for _, p := range pods {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil || !ok(p) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// withOperatorArgs restarts the cluster's operator with extra arguments,
// and with its own again when the test ends.
func withOperatorArgs(t *testing.T, extra ...string) {
	t.Helper()
	key := client.ObjectKey{Namespace: "mpi-operator", Name: "mpi-operator"}
	d := &appsv1.Deployment{}
	if err := k8s.Get(context.Background(), key, d); err != nil {
		t.Fatal(err)
	}
	original := slices.Clone(d.Spec.Template.Spec.Containers[0].Args)
	setArgs := func(args []string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
			d := &appsv1.Deployment{}
			if err := k8s.Get(ctx, key, d); err != nil {
				return false, nil
			}
			d.Spec.Template.Spec.Containers[0].Args = args
			return k8s.Update(ctx, d) == nil, nil
		})
		if err != nil {
			t.Fatalf("updating the operator's arguments: %v", err)
		}
		waitRolledOut(t, key)
		waitLedByCurrentPod(t, args)
	}
	setArgs(append(slices.Clone(original), extra...))
	t.Cleanup(func() { setArgs(original) })
}

// waitLedByCurrentPod waits until the Lease is held by an operator Pod
// running args. A rolled-out Deployment no longer counts a replaced Pod
// that is still stopping, and that Pod may still lead for a moment: a job
// created then was reconciled by the old operator (its launcher made
// without the gang's scheduling group, in one CI run).
func waitLedByCurrentPod(t *testing.T, args []string) {
	t.Helper()
	leaderPod(t, func(holder string) bool {
		p, err := clientset.CoreV1().Pods(operatorNamespace).Get(context.Background(), holder, metav1.GetOptions{})
		return err == nil && p.DeletionTimestamp == nil && slices.Equal(p.Spec.Containers[0].Args, args)
	})
}

// waitRolledOut waits until the Deployment runs only Pods of its latest
// template, all available.
func waitRolledOut(t *testing.T, key client.ObjectKey) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := k8s.Get(ctx, key, d); err != nil {
			return false, nil
		}
		s := d.Status
		want := ptr.Deref(d.Spec.Replicas, 1)
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want &&
			s.AvailableReplicas == want && s.UnavailableReplicas == 0, nil
	})
	if err != nil {
		t.Fatalf("the operator's Deployment did not roll out: %v", err)
	}
}
