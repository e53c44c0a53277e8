//go:build e2e

package tas

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/test/internal/kueueobj"
)

// The cluster's topology: blocks of racks of hosts, each host with room
// for hostCPU single-CPU Pods. A block holds 36 Pods, one job's 32
// workers and its launcher; a rack 12.
const (
	blockLabel = "example.com/topology-block"
	rackLabel  = "example.com/topology-rack"
	hostLabel  = "kubernetes.io/hostname"
	tasLabel   = "example.com/tas"
	blocks     = 2
	racks      = 3
	hosts      = 4
	hostCPU    = 3
	workers    = 32
	queueLabel = "kueue.x-k8s.io/queue-name"
)

var k8s client.Client

func TestMain(m *testing.M) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "no cluster: run make test-tas:", err)
		os.Exit(1)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflow.AddToScheme(scheme))
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestRanksFollowTheTopology: a 32-worker MPIJob that requires one block,
// or prefers one rack (it fits none), gets every rank in one block, consecutive ranks on
// the same rack and host wherever the assignment allows, and a hostfile in
// the order of the ranks Kueue placed; with runLauncherAsWorker the
// launcher is rank 0.
func TestRanksFollowTheTopology(t *testing.T) {
	ns := setUp(t)
	for _, c := range []struct {
		name       string
		asWorker   bool
		annotation string
	}{
		{"required block", false, "kueue.x-k8s.io/podset-required-topology"},
		{"required block, runLauncherAsWorker", true, "kueue.x-k8s.io/podset-required-topology"},
		// Kueue takes a rack if the job fits one, else the lowest level
		// that holds it: a block.
		{"preferred rack", false, "kueue.x-k8s.io/podset-preferred-topology"},
	} {
		t.Run(c.name, func(t *testing.T) {
			asWorker := c.asWorker
			job := topologyJob(ns, asWorker, c.annotation)
			if err := k8s.Create(context.Background(), job); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { deleteJob(t, job) })
			ranks := placedRanks(t, job, asWorker)
			nodes := nodeTopology(t)
			t.Logf("rank | replica-index | Pod | node | rack | block")
			for r, p := range ranks {
				n := nodes[p.Spec.NodeName]
				t.Logf("%d | %s | %s | %s | %s | %s", r, p.Labels[kubeflow.LabelReplicaIndex], p.Name, p.Spec.NodeName, n[rackLabel], n[blockLabel])
			}
			expectContiguous(t, ranks, nodes, blockLabel, true)
			expectContiguous(t, ranks, nodes, rackLabel, false)
			expectContiguous(t, ranks, nodes, hostLabel, false)
			expectHostfileInRankOrder(t, job, ranks)
		})
	}
}

// setUp makes the nodes (kwok's), Kueue's Topology, a ResourceFlavor on
// the nodes, a ClusterQueue and a LocalQueue in a new namespace.
func setUp(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: *resource.NewQuantity(hostCPU, resource.DecimalSI), corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	for b := range blocks {
		for r := range racks {
			for h := range hosts {
				name := fmt.Sprintf("tas-b%d-r%d-h%d", b, r, h)
				node := &corev1.Node{
					ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
						Labels: map[string]string{tasLabel: "true", blockLabel: fmt.Sprintf("b%d", b),
							rackLabel: fmt.Sprintf("b%d-r%d", b, r), hostLabel: name}},
					Status: corev1.NodeStatus{Allocatable: capacity, Capacity: capacity},
				}
				if err := k8s.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
			}
		}
	}
	ns := fmt.Sprintf("tas-%d", time.Now().Unix()%100000)
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	create := func(obj *unstructured.Unstructured) {
		t.Helper()
		if err := k8s.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	create(kueueobj.Object("Topology", "", "tas", map[string]any{"spec": map[string]any{"levels": []any{
		map[string]any{"nodeLabel": blockLabel}, map[string]any{"nodeLabel": rackLabel}, map[string]any{"nodeLabel": hostLabel},
	}}}))
	create(kueueobj.Object("ResourceFlavor", "", "tas", map[string]any{"spec": map[string]any{
		"nodeLabels": map[string]any{tasLabel: "true"}, "topologyName": "tas",
	}}))
	cq := kueueobj.Object("ClusterQueue", "", "tas", map[string]any{"spec": map[string]any{
		"namespaceSelector": map[string]any{},
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"cpu"},
			"flavors":          []any{map[string]any{"name": "tas", "resources": []any{map[string]any{"name": "cpu", "nominalQuota": "100"}}}},
		}},
	}})
	create(cq)
	create(kueueobj.Object("LocalQueue", ns, "queue", map[string]any{"spec": map[string]any{"clusterQueue": "tas"}}))
	kueueobj.WaitActive(t, k8s, cq)
	return ns
}

// topologyJob is the job: 32 workers of 1 CPU each, asking with
// annotation for a block (required) or a rack (preferred); with
// runLauncherAsWorker, the launcher asks the same (it runs rank 0).
func topologyJob(ns string, asWorker bool, annotation string) *kubeflow.MPIJob {
	// Kueue v0.17 takes one topology annotation per PodSet: required
	// block with preferred rack is refused by its webhook ("must not
	// contain more than one topology annotation"). Within the required
	// block its placement fills racks, then hosts, as few as it can.
	level := blockLabel
	if strings.Contains(annotation, "preferred") {
		level = rackLabel
	}
	placement := map[string]string{annotation: level}
	template := func(annotations map[string]string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "mpi", Image: "mpi:none",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			}}},
		}
	}
	var launcher map[string]string
	if asWorker {
		// The launcher is a PodSet of its own, which Kueue places apart
		// from the workers' unless both name the same group: then rank 0
		// goes in the block (and next to the rack) of rank 1.
		placement["kueue.x-k8s.io/podset-group-name"] = "ranks"
		launcher = placement
	}
	return &kubeflow.MPIJob{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ranks-", Namespace: ns, Labels: map[string]string{queueLabel: "queue"}},
		Spec: kubeflow.MPIJobSpec{
			RunLauncherAsWorker: ptr.To(asWorker),
			RunPolicy:           kubeflow.RunPolicy{CleanPodPolicy: ptr.To(kubeflow.CleanPodPolicyNone)},
			MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
				kubeflow.MPIReplicaTypeLauncher: {Template: template(launcher)},
				kubeflow.MPIReplicaTypeWorker:   {Replicas: ptr.To[int32](workers), Template: template(placement)},
			},
		},
	}
}

// deleteJob deletes job and waits until its Pods are gone, so that the
// next job finds the room free.
func deleteJob(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	if err := k8s.Delete(context.Background(), job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Errorf("deleting %s: %v", job.Name, err)
		return
	}
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		err := k8s.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabels{kubeflow.LabelJobName: job.Name})
		return err == nil && len(list.Items) == 0, nil
	})
	if err != nil {
		t.Errorf("the Pods of %s are not gone: %v", job.Name, err)
	}
}

// placedRanks waits until every Pod that runs ranks is bound to a node,
// and returns them in rank order: by their replica-index label, the
// launcher first when it runs rank 0.
func placedRanks(t *testing.T, job *kubeflow.MPIJob, asWorker bool) []corev1.Pod {
	t.Helper()
	want := workers
	if asWorker {
		want++
	}
	var ranks []corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := k8s.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabels{kubeflow.LabelJobName: job.Name}); err != nil {
			return false, nil
		}
		ranks = ranks[:0]
		for _, p := range list.Items {
			if p.Labels[kubeflow.LabelJobRole] == "launcher" && !asWorker {
				continue
			}
			if p.Spec.NodeName == "" {
				return false, nil
			}
			ranks = append(ranks, p)
		}
		return len(ranks) == want, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d Pods of %s bound to nodes: %v (%d bound)", want, job.Name, err, len(ranks))
	}
	sort.Slice(ranks, func(i, j int) bool { return replicaIndex(t, &ranks[i]) < replicaIndex(t, &ranks[j]) })
	for r := range ranks {
		if got := replicaIndex(t, &ranks[r]); got != r {
			t.Fatalf("the Pods' replica indices are not 0..%d: rank %d is Pod %s of index %d", want-1, r, ranks[r].Name, got)
		}
	}
	return ranks
}

func replicaIndex(t *testing.T, p *corev1.Pod) int {
	t.Helper()
	i, err := strconv.Atoi(p.Labels[kubeflow.LabelReplicaIndex])
	if err != nil {
		t.Fatalf("Pod %s: label %s: %v", p.Name, kubeflow.LabelReplicaIndex, err)
	}
	return i
}

// nodeTopology returns every node's labels.
func nodeTopology(t *testing.T) map[string]map[string]string {
	t.Helper()
	var list corev1.NodeList
	if err := k8s.List(context.Background(), &list, client.MatchingLabels{tasLabel: "true"}); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, n := range list.Items {
		out[n.Name] = n.Labels
	}
	return out
}

// expectContiguous checks that the ranks fill the domains of level one
// after the other: rank i+1 leaves rank i's domain only for one it has not
// been in, so consecutive ranks share a domain wherever the assignment
// allows. With one, every rank is in the same domain.
func expectContiguous(t *testing.T, ranks []corev1.Pod, nodes map[string]map[string]string, level string, one bool) {
	t.Helper()
	seen := map[string]bool{}
	prev := ""
	var order []string
	for r, p := range ranks {
		d := nodes[p.Spec.NodeName][level]
		if d == prev {
			continue
		}
		if seen[d] {
			t.Errorf("%s: rank %d is back in %s after %s: ranks are not grouped by %s (order %v)", level, r, d, prev, level, order)
		}
		seen[d], prev = true, d
		order = append(order, d)
	}
	if one && len(order) != 1 {
		t.Errorf("the ranks are in %d domains of %s (%v), want one", len(order), level, order)
	}
	t.Logf("%s, in rank order: %v", level, order)
}

// expectHostfileInRankOrder: the hostfile's line r names the Pod that
// Kueue placed as rank r.
func expectHostfileInRankOrder(t *testing.T, job *kubeflow.MPIJob, ranks []corev1.Pod) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: job.Namespace, Name: builder.ConfigMapName(job)}, cm); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(cm.Data[builder.HostfileKey]), "\n")
	if len(lines) != len(ranks) {
		t.Fatalf("the hostfile has %d lines for %d ranks:\n%s", len(lines), len(ranks), cm.Data[builder.HostfileKey])
	}
	for r, line := range lines {
		host, _, _ := strings.Cut(strings.Fields(line)[0], ".")
		want := ranks[r].Spec.Hostname
		if want == "" {
			want = ranks[r].Name
		}
		if host != want {
			t.Errorf("hostfile line %d names %s; rank %d is Pod %s (host %s)", r, host, r, ranks[r].Name, want)
		}
	}
	t.Logf("the hostfile's %d lines name the ranks' Pods in rank order", len(lines))
}
