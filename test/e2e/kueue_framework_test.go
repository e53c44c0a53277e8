//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/test/internal/kueueobj"
)

// Kueue's objects are written as unstructured ones, the way a user's YAML
// reads: the suite stays free of Kueue's Go module and of the versions of
// Kubernetes' modules it would pull in.

const (
	kueueAPI           = kueueobj.API
	kueueQueueLabel    = "kueue.x-k8s.io/queue-name"
	kueuePriorityLabel = "kueue.x-k8s.io/priority-class"
	kueuePodSetLabel   = "kueue.x-k8s.io/podset"
	// kueueWebhooks is the configuration hack/kueue/up.sh registers.
	kueueWebhooks = "kueue-mutating-webhook-configuration"
)

// Each Pod of a queued job (a launcher and two workers) asks for 400m, so a
// job asks for 1200m: one fits a node of the local cluster (2 CPUs), and
// two fit its two nodes, so that what holds a job back in these tests is
// the queue's quota, never the nodes.
var (
	kueuePodCPU = resource.MustParse("400m")
	kueueJobCPU = resource.MustParse("1200m")
)

// requireKueue skips the test when Kueue's webhooks are not registered
// (hack/kueue/up.sh was not run), unless E2E_REQUIRE_KUEUE is set, as
// make test-e2e sets it: there a missing Kueue fails the test.
func requireKueue(t *testing.T) {
	t.Helper()
	err := k8s.Get(context.Background(), client.ObjectKey{Name: kueueWebhooks}, &admissionregistrationv1.MutatingWebhookConfiguration{})
	switch {
	case err == nil:
	case apierrors.IsNotFound(err):
		msg := "Kueue is not running on this cluster: start it with hack/kueue/up.sh (make test-e2e does)"
		if os.Getenv("E2E_REQUIRE_KUEUE") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	default:
		t.Fatalf("looking for Kueue's webhooks: %v", err)
	}
}

// kueueObject is a Kueue object of kind with the given top-level fields.
func kueueObject(kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	return kueueobj.Object(kind, ns, name, fields)
}

// createKueueObject creates obj and deletes it when the test ends; Kueue
// removes its finalizers once nothing uses it.
func createKueueObject(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), obj) })
}

// newKueueQueue makes a ResourceFlavor with flavorSpec, a ClusterQueue
// holding quota CPU of it for every namespace (v1beta2 admits none without
// a namespaceSelector) that preempts lower priorities, and a LocalQueue
// in ns pointing at it. The cluster-scoped ones are named after ns, so
// tests never share a queue. It returns the LocalQueue's name.
func newKueueQueue(t *testing.T, ns string, quota resource.Quantity, flavorSpec map[string]any) string {
	t.Helper()
	if flavorSpec == nil {
		flavorSpec = map[string]any{}
	}
	createKueueObject(t, kueueObject("ResourceFlavor", "", ns, map[string]any{"spec": flavorSpec}))
	cq := kueueObject("ClusterQueue", "", ns, map[string]any{"spec": map[string]any{
		"namespaceSelector": map[string]any{},
		"preemption":        map[string]any{"withinClusterQueue": "LowerPriority"},
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"cpu"},
			"flavors": []any{map[string]any{
				"name":      ns,
				"resources": []any{map[string]any{"name": "cpu", "nominalQuota": quota.String()}},
			}},
		}},
	}})
	createKueueObject(t, cq)
	createKueueObject(t, kueueObject("LocalQueue", ns, "queue", map[string]any{"spec": map[string]any{"clusterQueue": ns}}))
	waitClusterQueueActive(t, cq)
	return "queue"
}

// newPriorityClass makes a WorkloadPriorityClass, deleted after the test.
func newPriorityClass(t *testing.T, name string, value int64) string {
	t.Helper()
	createKueueObject(t, kueueObject("WorkloadPriorityClass", "", name, map[string]any{"value": value}))
	return name
}

// queuedJob is an MPIJob of two Open MPI workers in ns, submitted to the
// LocalQueue queue, each Pod asking for kueuePodCPU. Its workers go when
// it finishes (cleanPodPolicy Running), so the CPU Kueue's quota gives
// back is free on the nodes too.
func queuedJob(ns, name, queue string, command ...string) *kubeflow.MPIJob {
	job := mpiJobIn(ns, name, openMPI4, false, 2, command...)
	job.Labels = map[string]string{kueueQueueLabel: queue}
	job.Spec.RunPolicy.CleanPodPolicy = ptr.To(kubeflow.CleanPodPolicyRunning)
	for _, spec := range job.Spec.MPIReplicaSpecs {
		spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: kueuePodCPU}
	}
	return job
}

// kueueCondition reads a condition of a Kueue object's status.
func kueueCondition(obj *unstructured.Unstructured, condType string) (status, reason, message string) {
	return kueueobj.Condition(obj, condType)
}

// workloadOf returns the Workload Kueue made for job, or nil before it
// exists.
func workloadOf(ctx context.Context, job *kubeflow.MPIJob) (*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(kueueAPI)
	list.SetKind("WorkloadList")
	if err := k8s.List(ctx, list, client.InNamespace(job.Namespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, ref := range list.Items[i].GetOwnerReferences() {
			if ref.Kind == "MPIJob" && ref.Name == job.Name {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// waitWorkload polls job's Workload until done says so (or returns an
// error, which ends the wait at once).
func waitWorkload(t *testing.T, job *kubeflow.MPIJob, what string, done func(wl *unstructured.Unstructured) (bool, error)) *unstructured.Unstructured {
	t.Helper()
	var wl *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		if wl, err = workloadOf(ctx, job); err != nil || wl == nil {
			return false, nil
		}
		return done(wl)
	})
	if err != nil {
		var status any
		if wl != nil {
			status = wl.Object["status"]
		}
		t.Fatalf("Workload of MPIJob %s/%s: waiting for %s: %v; status %v", job.Namespace, job.Name, what, err, status)
	}
	return wl
}

// waitJob polls job on the local cluster until done says so (or returns
// an error, which ends the wait at once), and returns it; a job not there
// (yet) is waited for.
func waitJob(t *testing.T, job *kubeflow.MPIJob, what string, done func(*kubeflow.MPIJob) (bool, error)) *kubeflow.MPIJob {
	t.Helper()
	return waitOn(t, localCluster(), job, what, func(j *kubeflow.MPIJob) (bool, error) {
		if j == nil {
			return false, nil
		}
		return done(j)
	})
}

// jobPods lists every Pod of the job, launcher and workers.
func jobPods(ctx context.Context, job *kubeflow.MPIJob) ([]corev1.Pod, error) {
	pods, err := clientset.CoreV1().Pods(job.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: kubeflow.LabelJobName + "=" + job.Name,
	})
	if err != nil {
		return nil, fmt.Errorf("listing the Pods of %s: %w", job.Name, err)
	}
	return pods.Items, nil
}

// waitClusterQueueActive waits until Kueue calls the ClusterQueue Active.
func waitClusterQueueActive(t *testing.T, cq *unstructured.Unstructured) {
	t.Helper()
	kueueobj.WaitActive(t, k8s, cq)
}
