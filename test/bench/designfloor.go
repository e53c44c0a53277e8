package main

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

// designFloor is the floor of the design rather than of bare Pods: a bare
// client, as the operator's ServiceAccount and within its limits, creates
// every object the design gives each of jobs jobs at once (the key
// Secret, the headless Service, the hostfile ConfigMap, one
// EndpointSlice, the workers and the launcher Job, whose Pod the Job
// controller makes), and it returns the time until every Pod runs. What
// the operator adds to it is its own; what it adds to the bare-Pod floor
// is the design's: more objects for the API server on the same cores.
// Status writes and events are left out, so it is a lower bound.
func (e *env) designFloor(ctx context.Context, jobs, workers int) (time.Duration, error) {
	ns := fmt.Sprintf("design-floor-%dx%d", jobs, workers)
	if err := newNamespace(ctx, e.cs, ns); err != nil {
		return 0, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pt, err := watchPods(wctx, e.cs, ns, time.Now())
	if err != nil {
		return 0, err
	}
	perJob := workers + 5
	start := time.Now()
	pt.mu.Lock()
	pt.start = start
	pt.mu.Unlock()
	err = benchcluster.Parallel(jobs*perJob, e.o.parallelism, func(i int) error {
		return e.createDesignObject(ctx, ns, fmt.Sprintf("job-%d", i/perJob), i%perJob)
	})
	if err != nil {
		return 0, fmt.Errorf("design floor: %w", err)
	}
	return e.allRunning(ctx, pt, ns, jobs*(workers+1), fmt.Sprintf("%d × %d, design floor", jobs, workers))
}

// createDesignObject creates the k-th object of job: 0 to 4 are the
// Secret, Service, ConfigMap, EndpointSlice and launcher Job, the rest
// its workers.
func (e *env) createDesignObject(ctx context.Context, ns, job string, k int) error {
	meta := metav1.ObjectMeta{Name: job, Namespace: ns}
	opts := metav1.CreateOptions{}
	var err error
	switch k {
	case 0:
		_, err = e.floorCS.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: meta, Type: corev1.SecretTypeSSHAuth,
			Data: map[string][]byte{corev1.SSHAuthPrivateKey: make([]byte, 400), "ssh-publickey": make([]byte, 100)},
		}, opts)
	case 1:
		_, err = e.floorCS.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: meta, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone},
		}, opts)
	case 2:
		_, err = e.floorCS.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: meta, Data: map[string]string{"hostfile": string(make([]byte, 300))},
		}, opts)
	case 3:
		slice := &discoveryv1.EndpointSlice{ObjectMeta: meta, AddressType: discoveryv1.AddressTypeIPv4}
		slice.Labels = map[string]string{discoveryv1.LabelServiceName: job}
		_, err = e.floorCS.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, opts)
	case 4:
		tmpl := benchPod(ns, "").Spec
		tmpl.RestartPolicy = corev1.RestartPolicyNever
		_, err = e.floorCS.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: job + "-launcher", Namespace: ns},
			Spec:       batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: corev1.PodTemplateSpec{Spec: tmpl}},
		}, opts)
	default:
		_, err = e.floorCS.CoreV1().Pods(ns).Create(ctx, benchPod(ns, fmt.Sprintf("%s-worker-%d", job, k-5)), opts)
	}
	return err
}
