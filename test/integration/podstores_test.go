package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// TestCacheReadsPastAPodItNeverHeld: the operator's cache, with the
// client-go it is built on, tells when it has read past a Pod's create
// even when the Pod is gone before the cache could hold it. That is what
// frees a create expectation whose event never comes (PodStores); with
// client-go's AtomicFIFO off, the stores would not know and this fails.
func TestCacheReadsPastAPodItNeverHeld(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "brief", Namespace: ns, Labels: map[string]string{kubeflow.LabelOperatorName: kubeflow.OperatorName}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	created := pod.ResourceVersion
	if err := k8s.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	if podStores.ReadPast(created + "0") {
		t.Fatalf("the cache claims to have read past resourceVersion %s0, newer than any write", created)
	}
	eventually(t, "the operator's cache reads past the brief Pod's create", func(context.Context) (bool, error) {
		return podStores.ReadPast(created), nil
	})
}
