package integration

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// giveAddress plays kubelet: worker Pod runs with the given IP.
func giveAddress(t *testing.T, pod *corev1.Pod, ip string) {
	t.Helper()
	eventually(t, "giving a Pod its address", func(ctx context.Context) (bool, error) {
		p := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return false, err
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		err := k8s.Status().Update(ctx, p)
		return err == nil, err
	})
}

// publishedHosts maps each hostname the job's Service publishes to its
// address, read from the EndpointSlices of the Service as CoreDNS reads
// them: by the service-name label.
func publishedHosts(ctx context.Context, job *kubeflow.MPIJob) (map[string]string, error) {
	var list discoveryv1.EndpointSliceList
	if err := k8s.List(ctx, &list, client.InNamespace(job.Namespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: builder.ServiceName(job)}); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, sl := range list.Items {
		for _, e := range sl.Endpoints {
			if e.Hostname != nil && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
				out[*e.Hostname] = e.Addresses[0]
			}
		}
	}
	return out, nil
}

// TestWorkersArePublishedUnderTheirHostnames: the API server takes the
// slices the operator writes for its Service, which selects no Pod; each
// worker is published under its hostname once it has an address, and a
// deleted worker's address is withdrawn.
func TestWorkersArePublishedUnderTheirHostnames(t *testing.T) {
	ns := newNamespace(t)
	job := createJob(t, testjob.MakeMPIJob("pi", ns).Workers(3).Obj())
	pods := waitWorkers(t, job, 3)
	svc := &corev1.Service{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pi"}, svc); err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Selector) != 0 {
		t.Errorf("Service selects %v", svc.Spec.Selector)
	}
	want := map[string]string{}
	for i, p := range pods {
		ip := fmt.Sprintf("10.9.0.%d", 10+i)
		giveAddress(t, &p, ip)
		want[p.Name] = ip
	}
	eventually(t, "the three workers published", func(ctx context.Context) (bool, error) {
		got, err := publishedHosts(ctx, job)
		return err == nil && fmt.Sprint(got) == fmt.Sprint(want), fmt.Errorf("published %v: %w", got, err)
	})

	gone := pods[1]
	if err := k8s.Delete(context.Background(), &gone); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted worker's address withdrawn", func(ctx context.Context) (bool, error) {
		got, err := publishedHosts(ctx, job)
		return err == nil && got[gone.Name] != want[gone.Name], fmt.Errorf("published %v: %w", got, err)
	})
}
