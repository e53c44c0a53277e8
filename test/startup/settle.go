package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// runningPodsMetric is the kubelet's gauge of the Pods whose sandbox runs.
const runningPodsMetric = "kubelet_running_pods"

// settle waits until the kubelets run no more Pod sandboxes than they did
// before the first run. A namespace is gone from the API before its Pods'
// sandboxes are: the kubelets tear those down after, and the teardown of
// 21 of them slowed the container starts of the run after it by half.
func settle(ctx context.Context, cs kubernetes.Interface, baseline float64) error {
	return wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err := runningPods(ctx, cs)
		if err != nil {
			return false, err
		}
		return n <= baseline, nil
	})
}

// runningPods sums runningPodsMetric over the cluster's kubelets, read
// through the API server's node proxy.
func runningPods(ctx context.Context, cs kubernetes.Interface) (float64, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, node := range nodes.Items {
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node.Name, "proxy", "metrics").DoRaw(ctx)
		if err != nil {
			return 0, fmt.Errorf("metrics of node %s: %w", node.Name, err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
		if err != nil {
			return 0, fmt.Errorf("metrics of node %s: %w", node.Name, err)
		}
		if f, ok := families[runningPodsMetric]; ok {
			for _, m := range f.GetMetric() {
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum, nil
}
