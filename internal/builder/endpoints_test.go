package builder

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func addressedPod(name string, ips ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{Hostname: name, Subdomain: "pi", NodeName: "node-a"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, ip := range ips {
		p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	return p
}

func hostnames(sl *discoveryv1.EndpointSlice) []string {
	var out []string
	for _, e := range sl.Endpoints {
		out = append(out, *e.Hostname+"="+e.Addresses[0])
	}
	return out
}

func TestEndpointSlicesPublishAddressedPodsByFamily(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns"))
	deleting := addressedPod("pi-worker-3", "10.0.0.3")
	deleting.DeletionTimestamp = &metav1.Time{}
	finished := addressedPod("pi-worker-4", "10.0.0.4")
	finished.Status.Phase = corev1.PodFailed
	pods := []*corev1.Pod{
		addressedPod("pi-launcher", "10.0.0.9"),
		addressedPod("pi-worker-0", "10.0.0.1", "fd00::1"),
		addressedPod("pi-worker-1"), // no address yet
		addressedPod("pi-worker-2", "10.0.0.2"),
		deleting, finished,
	}
	got := EndpointSlices(job, pods, 2)
	var names []string
	for _, sl := range got {
		names = append(names, fmt.Sprintf("%s %s %v", sl.Name, sl.AddressType, hostnames(sl)))
		if sl.Labels[discoveryv1.LabelServiceName] != "pi" || sl.Labels[discoveryv1.LabelManagedBy] != EndpointSliceManager {
			t.Errorf("slice %s labels %v", sl.Name, sl.Labels)
		}
		if len(sl.OwnerReferences) != 1 || sl.OwnerReferences[0].Controller == nil || !*sl.OwnerReferences[0].Controller {
			t.Errorf("slice %s is not controlled by the job: %v", sl.Name, sl.OwnerReferences)
		}
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready == nil || !*e.Conditions.Ready || e.TargetRef == nil || e.TargetRef.Kind != "Pod" || *e.NodeName != "node-a" {
				t.Errorf("slice %s endpoint %+v: want ready, its Pod and node named", sl.Name, e)
			}
		}
	}
	want := []string{
		"pi-ipv4-0 IPv4 [pi-launcher=10.0.0.9 pi-worker-0=10.0.0.1]",
		"pi-ipv4-1 IPv4 [pi-worker-2=10.0.0.2]",
		"pi-ipv6-0 IPv6 [pi-worker-0=fd00::1]",
	}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("slices:\n%v\nwant:\n%v", names, want)
	}
}

func TestEndpointSlicesOfAFamilyGoneAreEmpty(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns"))
	got := EndpointSlices(job, nil, MaxEndpointsPerSlice, discoveryv1.AddressTypeIPv4)
	if len(got) != 1 || got[0].Name != "pi-ipv4-0" || len(got[0].Endpoints) != 0 {
		t.Errorf("no Pod left, a family the job had: %v, want its first slice, empty", got)
	}
	if got := EndpointSlices(job, nil, MaxEndpointsPerSlice); len(got) != 0 {
		t.Errorf("no Pod, no family: %d slices", len(got))
	}
}

func TestEndpointSlicesHoldAtMostTheAPIsLimit(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns"))
	var pods []*corev1.Pod
	for i := range 2500 {
		pods = append(pods, addressedPod(fmt.Sprintf("pi-worker-%d", i), fmt.Sprintf("10.%d.%d.1", i/256, i%256)))
	}
	got := EndpointSlices(job, pods, 5000)
	if len(got) != 3 || len(got[0].Endpoints) != 1000 || len(got[2].Endpoints) != 500 {
		t.Errorf("2500 Pods asked in slices of 5000: %d slices", len(got))
	}
}

// A worker is published once its containers run, not when its sandbox
// gets an address (its image may still be pulling, and mpirun would meet
// no sshd); the launcher with its address, as its init container waits
// for its own name when the hostfile lists it.
func TestPendingWorkerIsNotPublishedPendingLauncherIs(t *testing.T) {
	pending := func(name, role string) *corev1.Pod {
		p := addressedPod(name, "10.0.0.1")
		p.Labels = map[string]string{kubeflow.LabelJobRole: role}
		p.Status.Phase = corev1.PodPending
		return p
	}
	for _, c := range []struct {
		pod  *corev1.Pod
		want bool
	}{
		{pending("pi-worker-0", RoleWorker), false},
		{pending("pi-launcher", RoleLauncher), true},
		{addressedPod("pi-worker-0", "10.0.0.1"), true},
	} {
		if got := Published(c.pod); got != c.want {
			t.Errorf("%s %s: Published %t, want %t", c.pod.Name, c.pod.Status.Phase, got, c.want)
		}
	}
}
