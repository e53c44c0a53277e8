//go:build e2e

package e2e

import (
	"context"
	"testing"

	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/mpi-operator/mpi-operator/internal/gang"
)

// TestExampleKueue applies examples/v2beta1/kueue: its queues, then its
// job, which Kueue suspends as it is created, admits on the queue's quota,
// and which then runs pi on its two workers.
func TestExampleKueue(t *testing.T) {
	requireKueue(t)
	exampleTest(t)
	ns := newNamespace(t)
	applyExample(t, ns, "kueue/queues.yaml")
	waitClusterQueueActive(t, kueueObject("ClusterQueue", "", "cluster-queue", map[string]any{}))

	jobs := applyExample(t, ns, "kueue/pi.yaml")
	if len(jobs) != 1 {
		t.Fatalf("kueue/pi.yaml holds %d MPIJobs, want 1", len(jobs))
	}
	job := jobs[0]
	if !job.IsSuspended() {
		t.Errorf("the job was created running: Kueue's webhook did not suspend it")
	}
	wl := waitWorkload(t, job, "admission", func(wl *unstructured.Unstructured) (bool, error) {
		status, _, _ := kueueCondition(wl, "Admitted")
		return status == "True", nil
	})
	queue, _, _ := unstructured.NestedString(wl.Object, "spec", "queueName")
	cqName, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue")
	if queue != "user-queue" || cqName != "cluster-queue" {
		t.Errorf("Workload %s: queue %q admitted by ClusterQueue %q, want user-queue and cluster-queue", wl.GetName(), queue, cqName)
	}
	out := expectSucceeded(t, job)
	expectPiOnTwoWorkers(t, out)
	t.Run("MultiKueue", exampleMultiKueue)
}

func expectPiOnTwoWorkers(t *testing.T, out string) {
	t.Helper()
	hosts := piRanks(t, out)
	if !workerHost.MatchString(hosts[0]) || !workerHost.MatchString(hosts[1]) || hosts[0] == hosts[1] {
		t.Errorf("ranks ran on %v, want two distinct workers", hosts)
	}
}

// TestExampleGang runs examples/v2beta1/gang/pi.yaml with the operator
// started with --gang-scheduling=kubernetes, as the example says it must
// be: a Workload and a PodGroup of the job's 3 Pods are made, the Pods name
// the PodGroup, and the job succeeds. It switches the cluster's operator
// and back, so it runs alone.
func TestExampleGang(t *testing.T) {
	exampleTest(t)
	withOperatorArgs(t, "--gang-scheduling="+gang.Kubernetes)
	ns := newNamespace(t)
	// Watched from before the job exists: the operator deletes both once
	// the finished job's workers are cleaned up.
	workloads := watchFirst(t, func(ctx context.Context) (watch.Interface, error) {
		return clientset.SchedulingV1alpha3().Workloads(ns).Watch(ctx, metav1.ListOptions{})
	})
	podGroups := watchFirst(t, func(ctx context.Context) (watch.Interface, error) {
		return clientset.SchedulingV1alpha3().PodGroups(ns).Watch(ctx, metav1.ListOptions{})
	})
	jobs := applyExample(t, ns, "gang/pi.yaml")
	if len(jobs) != 1 {
		t.Fatalf("gang/pi.yaml holds %d MPIJobs, want 1", len(jobs))
	}
	job := jobs[0]

	w, ok := (<-workloads).(*schedulingv1alpha3.Workload)
	if !ok {
		t.Fatal("no Workload made for the job")
	}
	pg, ok := (<-podGroups).(*schedulingv1alpha3.PodGroup)
	if !ok {
		t.Fatal("no PodGroup made for the job")
	}
	if w.Name != job.Name || len(w.Spec.PodGroupTemplates) != 1 || minCount(w.Spec.PodGroupTemplates[0].SchedulingPolicy) != 3 {
		t.Errorf("Workload %s: %+v, want the job's name and one gang of minCount 3", w.Name, w.Spec)
	}
	if pg.Name != job.Name || minCount(pg.Spec.SchedulingPolicy) != 3 {
		t.Errorf("PodGroup %s: %+v, want the job's name and a gang of minCount 3", pg.Name, pg.Spec)
	}

	out := expectSucceeded(t, job)
	hosts := piRanks(t, out)
	if hosts[0] == hosts[1] {
		t.Errorf("both ranks ran on %s", hosts[0])
	}
	launchers := launcherPods(t, job)
	if len(launchers) == 0 {
		t.Fatal("no launcher Pod")
	}
	if g := launchers[len(launchers)-1].Spec.SchedulingGroup; g == nil || ptr.Deref(g.PodGroupName, "") != pg.Name {
		t.Errorf("launcher Pod's schedulingGroup %+v, want PodGroup %s", g, pg.Name)
	}
}

func minCount(p schedulingv1alpha3.PodGroupSchedulingPolicy) int32 {
	if p.Gang == nil {
		return -1
	}
	return p.Gang.MinCount
}

// watchFirst starts a watch now and sends on the channel the first object
// it sees added, or nil if none comes within jobTimeout.
func watchFirst(t *testing.T, start func(context.Context) (watch.Interface, error)) <-chan any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	w, err := start(ctx)
	if err != nil {
		cancel()
		t.Fatalf("starting a watch: %v", err)
	}
	first := make(chan any, 1)
	go func() {
		defer cancel()
		defer w.Stop()
		for {
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					first <- nil
					return
				}
				if e.Type == watch.Added {
					first <- e.Object
					return
				}
			case <-ctx.Done():
				first <- nil
				return
			}
		}
	}()
	t.Cleanup(cancel)
	return first
}
