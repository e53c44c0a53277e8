package benchcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// EnsureNodes makes n kwok nodes (in parallel) and waits until they are
// Ready and untainted: kwok's nodes carry a not-ready taint for a few
// seconds after creation, which would count against the first job.
func EnsureNodes(ctx context.Context, cs kubernetes.Interface, n int) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	err := Parallel(n, 50, func(i int) error {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        fmt.Sprintf("kwok-node-%d", i),
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
				Labels:      map[string]string{"type": "kwok"},
			},
			Status: corev1.NodeStatus{Allocatable: capacity, Capacity: capacity},
		}
		_, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("creating nodes: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, n := range nodes.Items {
			if len(n.Spec.Taints) == 0 && nodeReady(&n) {
				ready++
			}
		}
		return ready >= n, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d kwok nodes to be Ready: %w", n, err)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
