//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/test/upstream"
)

// upstreamFile reads a file of upstream's release from the Go module
// cache.
func upstreamFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(upstream.Dir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// createRaw creates an MPIJob from a manifest's bytes in namespace ns: the
// namespace goes in the request's path, the document is sent as it is.
func createRaw(t *testing.T, ns string, body []byte, contentType string) *kubeflow.MPIJob {
	t.Helper()
	return createRawOn(t, clientset, ns, body, contentType)
}

// createRawOn is createRaw through the clientset cs, of another cluster.
func createRawOn(t *testing.T, cs *kubernetes.Clientset, ns string, body []byte, contentType string) *kubeflow.MPIJob {
	t.Helper()
	raw, err := cs.CoreV1().RESTClient().Post().
		AbsPath("/apis/kubeflow.org/v2beta1/namespaces", ns, "mpijobs").
		SetHeader("Content-Type", contentType).Body(body).
		DoRaw(context.Background())
	if err != nil {
		t.Fatalf("creating the MPIJob: %v\n%s", err, raw)
	}
	job := &kubeflow.MPIJob{}
	if err := json.Unmarshal(raw, job); err != nil {
		t.Fatal(err)
	}
	return job
}

// edited returns the manifest with edit applied to its object, as JSON.
func edited(t *testing.T, doc []byte, edit func(job map[string]any)) []byte {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		t.Fatal(err)
	}
	edit(obj)
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// replicaSpecs calls f with each replica type's pod spec and first container.
func replicaSpecs(job map[string]any, f func(role string, pod, container map[string]any)) {
	specs := job["spec"].(map[string]any)["mpiReplicaSpecs"].(map[string]any)
	for role, rs := range specs {
		pod := rs.(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		f(role, pod, pod["containers"].([]any)[0].(map[string]any))
	}
}

// asRoot is what running upstream's images as root takes: no
// securityContext, the keys in /root/.ssh, the image's own sshd
// configuration (/etc/ssh/sshd_config: port 2222, host keys of the
// image) and Open MPI's consent to run as root (MPICH asks for none).
func asRoot(job map[string]any) {
	job["spec"].(map[string]any)["sshAuthMountPath"] = "/root/.ssh"
	replicaSpecs(job, func(role string, _, c map[string]any) {
		delete(c, "securityContext")
		if role == "Worker" {
			args := c["args"].([]any)
			for i, a := range args {
				if a == "-f" {
					c["args"] = args[:i]
				}
			}
		}
		if role == "Launcher" && job["spec"].(map[string]any)["mpiImplementation"] != string(kubeflow.MPIImplementationMPICH) {
			c["env"] = []any{
				map[string]any{"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"},
				map[string]any{"name": "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "value": "1"},
			}
		}
	})
}

// onHostNetwork puts the launcher and the workers in the nodes' network
// namespace. Both nodes of the local cluster are the same machine, one
// network namespace: two workers' sshds would both bind port 2222 there,
// whichever node they are on, so the job has one worker with both slots.
// Its workers are kept after success (cleanPodPolicy None) so that their
// sshd's log shows the launcher logged in: with hostNetwork every Pod
// reports the machine's hostname, so the ranks' host names cannot. The
// launcher and its one worker need 2 CPUs, which one node may have: they
// ask for a node each (required anti-affinity), as host-network Pods of a
// real job would, so the test still has ssh cross from one kubelet's Pod
// to another's. (Without it the scheduler put both on one node once the
// launcher Pod no longer waited for the worker's bind to be scheduled.)
func onHostNetwork(job map[string]any) {
	spec := job["spec"].(map[string]any)
	spec["slotsPerWorker"] = 2
	spec["runPolicy"].(map[string]any)["cleanPodPolicy"] = "None"
	name := job["metadata"].(map[string]any)["name"].(string)
	replicaSpecs(job, func(role string, pod, _ map[string]any) {
		// No dnsPolicy: the operator gives hostNetwork Pods
		// ClusterFirstWithHostNet; with the default ClusterFirst they would
		// get the node's resolver and the launcher would wait for its
		// workers' names forever.
		pod["hostNetwork"] = true
		pod["affinity"] = map[string]any{"podAntiAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
				"topologyKey":   "kubernetes.io/hostname",
				"labelSelector": map[string]any{"matchLabels": map[string]any{kubeflow.LabelJobName: name}},
			}},
		}}
		if role == "Worker" {
			job["spec"].(map[string]any)["mpiReplicaSpecs"].(map[string]any)[role].(map[string]any)["replicas"] = 1
		}
	})
}

var (
	piRankLine = regexp.MustCompile(`^Rank (\d+) on host (\S+)$`)
	workerHost = regexp.MustCompile(`^pi-worker-\d+$`)
)

// piRanks checks pi.cc's output for 2 ranks and a value of pi, and
// returns the host of each rank.
func piRanks(t *testing.T, out string) map[int]string {
	t.Helper()
	return piRanksN(t, out, 2)
}

// piRanksN is piRanks for n ranks.
func piRanksN(t *testing.T, out string, n int) map[int]string {
	t.Helper()
	hosts := map[int]string{}
	workers, pi := "", false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if m := piRankLine.FindStringSubmatch(line); m != nil {
			r, _ := strconv.Atoi(m[1])
			hosts[r] = m[2]
		}
		if w, ok := strings.CutPrefix(line, "Workers: "); ok {
			workers = w
		}
		if strings.HasPrefix(line, "pi is approximately 3.14") {
			pi = true
		}
	}
	ranks := workers == strconv.Itoa(n) && len(hosts) == n
	for r := range n {
		ranks = ranks && hosts[r] != ""
	}
	if !ranks || !pi {
		t.Fatalf("want Workers: %d, ranks 0 to %d and pi in the launcher output, got workers %q, ranks %v, pi %t:\n%s", n, n-1, workers, hosts, pi, out)
	}
	return hosts
}

// expectSSHLogin checks that the worker's sshd let the launcher in.
func expectSSHLogin(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	pods := workerPods(t, job)
	if len(pods) != 1 {
		t.Fatalf("%d worker Pods, want 1", len(pods))
	}
	raw, err := clientset.CoreV1().Pods(job.Namespace).GetLogs(pods[0].Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "Accepted publickey for mpiuser") {
		t.Errorf("the worker's sshd never let the launcher in:\n%s", raw)
	}
}

// expectPulledFromMirror checks that the launcher's image came from
// docker.io (the cluster's mirror of it: nothing else serves it).
func expectPulledFromMirror(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	pods := launcherPods(t, job)
	if len(pods) == 0 {
		t.Fatal("no launcher Pod")
	}
	p, err := clientset.CoreV1().Pods(job.Namespace).Get(context.Background(), pods[len(pods)-1].Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if !strings.HasPrefix(cs.ImageID, "docker.io/mpioperator/mpi-pi@sha256:") {
			t.Errorf("launcher image %s has ID %q, want one pulled as docker.io/mpioperator/mpi-pi", cs.Image, cs.ImageID)
		}
		t.Logf("launcher on %s ran %s (%s)", p.Spec.NodeName, cs.Image, cs.ImageID)
	}
}

// expectOnBothNodes checks from the scheduler's events that the job's Pods
// ran on both nodes (its 3 CPUs do not fit on one; its workers are gone
// by now under cleanPodPolicy Running).
func expectOnBothNodes(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	events, err := clientset.CoreV1().Events(job.Namespace).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=Scheduled"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string][]string{}
	for _, e := range events.Items {
		// "Successfully assigned NS/POD to NODE"
		if i := strings.LastIndex(e.Message, " to "); i >= 0 {
			node := e.Message[i+len(" to "):]
			nodes[node] = append(nodes[node], e.InvolvedObject.Name)
		}
	}
	if len(nodes) < 2 {
		t.Errorf("the job's Pods ran on %d node(s), want 2: %v", len(nodes), nodes)
	}
	t.Logf("Pods per node: %v", nodes)
}

// TestUpstreamPiWithRunLauncherAsWorker runs upstream's pi.yaml (Open
// MPI 5) and pi-mpich.yaml on their own images with runLauncherAsWorker
// and three ranks: one on the launcher and one on each worker. One job
// at a time: each asks for 3 of the local cluster's CPUs, and two started
// together can each hold part of them (no gang scheduling here).
func TestUpstreamPiWithRunLauncherAsWorker(t *testing.T) {
	for _, file := range []string{"pi.yaml", "pi-mpich.yaml"} {
		t.Run(file, func(t *testing.T) {
			body := edited(t, upstreamFile(t, "examples/v2beta1/pi/"+file), func(job map[string]any) {
				job["spec"].(map[string]any)["runLauncherAsWorker"] = true
				replicaSpecs(job, func(role string, _, c map[string]any) {
					if role != "Launcher" {
						return
					}
					for _, key := range []string{"command", "args"} {
						if args, ok := c[key].([]any); ok {
							for i, a := range args {
								if a == "-n" {
									args[i+1] = "3"
								}
							}
						}
					}
				})
			})
			job := createRaw(t, newNamespace(t), body, "application/json")
			hosts := piRanksN(t, expectSucceeded(t, job), 3)
			if hosts[0] != "pi-launcher" {
				t.Errorf("rank 0 ran on %q, want the launcher", hosts[0])
			}
			if !workerHost.MatchString(hosts[1]) || !workerHost.MatchString(hosts[2]) || hosts[1] == hosts[2] {
				t.Errorf("ranks 1 and 2 ran on %q and %q, want one on each worker", hosts[1], hosts[2])
			}
		})
	}
}
