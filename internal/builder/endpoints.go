package builder

import (
	"net/netip"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// The job's Service selects no Pod: the operator publishes its Pods'
// addresses in EndpointSlices itself. A Service that selects its Pods
// costs twice over. kube-controller-manager rewrites its Endpoints and
// EndpointSlices as each Pod starts (737 writes for 100 jobs of 8 in
// make bench, where the operator writes about 2 a job), and the scheduler
// spreads the Pods a Service selects, scoring each against its peers:
// 100-150 ms to bind 10 workers, 30-70 ms without. CoreDNS reads the
// slices alone, whoever writes them.

// MaxEndpointsPerSlice is the most endpoints the API accepts in one
// EndpointSlice.
const MaxEndpointsPerSlice = 1000

// EndpointSliceManager is the value of the managed-by label of the slices
// the operator writes, so that kube-controller-manager leaves them alone.
const EndpointSliceManager = "mpi-operator.kubeflow.org"

// Published reports whether a Pod has a name in DNS: it has an address,
// it is neither finished nor being deleted, and, for a worker, its
// containers have started (phase Running). A Pod has its address once its
// sandbox is up, before its image is pulled: a worker published then let
// the launcher, whose wait-for-workers init container waits for the
// names, run mpirun against a worker whose sshd would not start for as
// long as the pull took, and ssh gives up after its 10 connection
// attempts, a second apart (a retry of the launcher spent, or the job
// failed at backoffLimit 0). The launcher's own Pod is published with its
// address: its init container waits for its own name too when the
// hostfile lists it (runLauncherAsWorker). A Pod being deleted is left
// out at once (kube-controller-manager keeps it, marked terminating,
// while it stops): the next attempt's launcher then waits for the name
// of its replacement, not the old address.
func Published(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || len(p.Status.PodIPs) == 0 || p.Spec.Hostname == "" {
		return false
	}
	switch p.Status.Phase {
	case corev1.PodRunning:
		return true
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return p.Labels[kubeflow.LabelJobRole] == RoleLauncher
}

// EndpointSliceName is the name of the job's k-th slice of one address
// family. kube-controller-manager's slices are "<service>-" and five
// random letters and digits, so the two never meet.
func EndpointSliceName(job *kubeflow.MPIJob, family discoveryv1.AddressType, k int) string {
	return ServiceName(job) + "-" + familyName(family) + "-" + strconv.Itoa(k)
}

func familyName(family discoveryv1.AddressType) string {
	if family == discoveryv1.AddressTypeIPv6 {
		return "ipv6"
	}
	return "ipv4"
}

// EndpointSlices are the slices of the job's headless Service: the
// given Pods that Published, in the order given, each address family in
// slices of at most perSlice endpoints. families are the address types to
// return slices for even when empty: those the job has now, so that a
// slice whose Pods all went is emptied rather than left stale. A Pod has
// one endpoint per address it has, by family.
func EndpointSlices(job *kubeflow.MPIJob, pods []*corev1.Pod, perSlice int, families ...discoveryv1.AddressType) []*discoveryv1.EndpointSlice {
	perSlice = min(max(perSlice, 1), MaxEndpointsPerSlice)
	byFamily := map[discoveryv1.AddressType][]discoveryv1.Endpoint{}
	for _, f := range families {
		byFamily[f] = nil
	}
	for _, p := range pods {
		if !Published(p) {
			continue
		}
		for _, ip := range p.Status.PodIPs {
			f, ok := addressType(ip.IP)
			if !ok {
				continue
			}
			byFamily[f] = append(byFamily[f], endpoint(p, ip.IP))
		}
	}
	var slices []*discoveryv1.EndpointSlice
	for _, f := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		eps, ok := byFamily[f]
		if !ok {
			continue
		}
		for k := 0; k == 0 || k*perSlice < len(eps); k++ {
			chunk := eps[min(k*perSlice, len(eps)):min((k+1)*perSlice, len(eps))]
			slices = append(slices, endpointSlice(job, f, k, chunk))
		}
	}
	return slices
}

func endpointSlice(job *kubeflow.MPIJob, family discoveryv1.AddressType, k int, eps []discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	labels := JobLabels(job)
	labels[discoveryv1.LabelServiceName] = ServiceName(job)
	labels[discoveryv1.LabelManagedBy] = EndpointSliceManager
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  objectMeta(job, EndpointSliceName(job, family, k), labels),
		AddressType: family,
		Endpoints:   eps,
		// No ports: the Service is headless and has none; CoreDNS answers
		// for a slice without ports.
		Ports: []discoveryv1.EndpointPort{},
	}
}

// endpoint publishes the Pod under its hostname. Ready is true whatever
// the Pod's readiness, as the Service publishes not-ready addresses:
// mpirun connects to sshd, not to a ready endpoint.
func endpoint(p *corev1.Pod, ip string) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{
		Addresses: []string{ip},
		Hostname:  ptr.To(p.Spec.Hostname),
		Conditions: discoveryv1.EndpointConditions{
			Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false),
		},
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
	}
	if p.Spec.NodeName != "" {
		e.NodeName = ptr.To(p.Spec.NodeName)
	}
	return e
}

// addressType is the family of an IP address.
func addressType(ip string) (discoveryv1.AddressType, bool) {
	a, err := netip.ParseAddr(ip)
	switch {
	case err != nil:
		return "", false
	case a.Is4():
		return discoveryv1.AddressTypeIPv4, true
	default:
		return discoveryv1.AddressTypeIPv6, true
	}
}
