//go:build e2e

package e2e

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/test/internal/kueueobj"
)

// MultiKueue's manager is a second cluster (hack/multikueue/up.sh): an API
// server with no node, its own Kueue and this operator. The local cluster
// is its worker, known to the manager's Kueue as the Secret
// kueue-system/worker1.
const (
	workerSecret = "worker1"
	// multiKueue names MultiKueue's admission check controller, and the
	// runPolicy.managedBy Kueue's webhook gives the manager's MPIJobs.
	multiKueue = "kueue.x-k8s.io/multikueue"
)

// cluster is one the tests talk to: the local one, or MultiKueue's
// manager.
type cluster struct {
	name string
	c    client.Client
	cs   *kubernetes.Clientset
}

func localCluster() cluster { return cluster{name: "local cluster", c: k8s, cs: clientset} }

var (
	managerOnce sync.Once
	manager     cluster
	managerErr  error
)

// requireManager returns the manager cluster that E2E_MANAGER_KUBECONFIG
// names. Without one the test is skipped, unless E2E_REQUIRE_KUEUE is set
// (make test-e2e sets both): there it fails.
func requireManager(t *testing.T) cluster {
	t.Helper()
	requireKueue(t)
	path := os.Getenv("E2E_MANAGER_KUBECONFIG")
	managerOnce.Do(func() {
		if path == "" {
			managerErr = errors.New("E2E_MANAGER_KUBECONFIG is not set")
			return
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			managerErr = err
			return
		}
		manager.name = "manager"
		if manager.c, managerErr = client.New(cfg, client.Options{Scheme: k8s.Scheme()}); managerErr != nil {
			return
		}
		if manager.cs, managerErr = kubernetes.NewForConfig(cfg); managerErr != nil {
			return
		}
		managerErr = manager.c.List(context.Background(), &kubeflow.MPIJobList{}, client.Limit(1))
	})
	if managerErr != nil {
		msg := "MultiKueue's manager cluster is not up (make multikueue-up; make test-e2e does): " + managerErr.Error()
		if os.Getenv("E2E_REQUIRE_KUEUE") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return manager
}

// newMultiKueue makes a queue "queue" in ns on both clusters. On the
// worker it is newKueueQueue's, with workerQuota of CPU. On the manager:
// ns itself, and a ClusterQueue with managerQuota of CPU whose admission
// check is MultiKueue's, with the worker as its only cluster. Every
// cluster-scoped object is named after ns, so tests never share one.
func newMultiKueue(t *testing.T, ns string, managerQuota, workerQuota resource.Quantity) string {
	t.Helper()
	m := requireManager(t).c
	queue := newKueueQueue(t, ns, workerQuota, nil)
	managerNamespace(t, ns)
	onManager := func(obj *unstructured.Unstructured) {
		t.Helper()
		if err := m.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %s %s on the manager: %v", obj.GetKind(), obj.GetName(), err)
		}
		t.Cleanup(func() { _ = m.Delete(context.Background(), obj) })
	}
	onManager(kueueObject("MultiKueueCluster", "", ns, map[string]any{"spec": map[string]any{
		"clusterSource": map[string]any{"kubeConfig": map[string]any{"locationType": "Secret", "location": workerSecret}},
	}}))
	onManager(kueueObject("MultiKueueConfig", "", ns, map[string]any{"spec": map[string]any{"clusters": []any{ns}}}))
	onManager(kueueObject("AdmissionCheck", "", ns, map[string]any{"spec": map[string]any{
		"controllerName": multiKueue,
		"parameters":     map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": ns},
	}}))
	onManager(kueueObject("ResourceFlavor", "", ns, map[string]any{"spec": map[string]any{}}))
	cq := kueueObject("ClusterQueue", "", ns, map[string]any{"spec": map[string]any{
		"namespaceSelector": map[string]any{},
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"cpu"},
			"flavors": []any{map[string]any{
				"name":      ns,
				"resources": []any{map[string]any{"name": "cpu", "nominalQuota": managerQuota.String()}},
			}},
		}},
		"admissionChecksStrategy": map[string]any{"admissionChecks": []any{map[string]any{"name": ns}}},
	}})
	onManager(cq)
	onManager(kueueObject("LocalQueue", ns, queue, map[string]any{"spec": map[string]any{"clusterQueue": ns}}))
	// Active once the worker is connected and the check is ready: a
	// mistake in any of them shows here, not as a job that never starts.
	kueueobj.WaitActive(t, m, kueueObject("MultiKueueCluster", "", ns, nil))
	kueueobj.WaitActive(t, m, kueueObject("AdmissionCheck", "", ns, nil))
	kueueobj.WaitActive(t, m, cq)
	return queue
}

// managerNamespace makes namespace ns on the manager too, deleted after
// the test.
func managerNamespace(t *testing.T, ns string) {
	t.Helper()
	m := requireManager(t).c
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := m.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating namespace %s on the manager: %v", ns, err)
	}
	t.Cleanup(func() { _ = m.Delete(context.Background(), obj) })
}

// waitOn polls job on cluster cl until done says so (or returns an error,
// which ends the wait at once), and returns it; nil when it is gone.
func waitOn(t *testing.T, cl cluster, job *kubeflow.MPIJob, what string, done func(*kubeflow.MPIJob) (bool, error)) *kubeflow.MPIJob {
	t.Helper()
	var got *kubeflow.MPIJob
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, jobTimeout, true, func(ctx context.Context) (bool, error) {
		got = &kubeflow.MPIJob{}
		err := cl.c.Get(ctx, client.ObjectKeyFromObject(job), got)
		switch {
		case apierrors.IsNotFound(err):
			got = nil
		case err != nil:
			return false, nil
		}
		return done(got)
	})
	if err != nil {
		var status any
		if got != nil {
			status = got.Status
		}
		t.Fatalf("MPIJob %s/%s on the %s: waiting for %s: %v; status %+v", job.Namespace, job.Name, cl.name, what, err, status)
	}
	return got
}

// podsIn lists the Pods of namespace ns on cluster cl.
func podsIn(ctx context.Context, cl cluster, ns string) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := cl.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// followLauncher collects the output of the worker's launcher Pod of job
// from the moment its container starts: MultiKueue deletes the worker's
// copy of a job, Pods and all, as soon as the manager has its outcome, so
// a log read after the end may find nothing. The output comes on the
// channel once the container ends, or ctx does.
func followLauncher(ctx context.Context, job *kubeflow.MPIJob) <-chan string {
	out := make(chan string, 1)
	go func() {
		var pod string
		_ = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			pods, err := jobPods(ctx, job)
			if err != nil {
				return false, nil
			}
			for _, p := range pods {
				if p.Labels[kubeflow.LabelJobRole] != "launcher" {
					continue
				}
				for _, c := range p.Status.ContainerStatuses {
					if c.State.Running != nil || c.State.Terminated != nil {
						pod = p.Name
						return true, nil
					}
				}
			}
			return false, nil
		})
		if pod == "" {
			out <- "(no launcher Pod started)"
			return
		}
		stream, err := clientset.CoreV1().Pods(job.Namespace).GetLogs(pod, &corev1.PodLogOptions{Follow: true}).Stream(ctx)
		if err != nil {
			out <- "(no logs: " + err.Error() + ")"
			return
		}
		defer func() { _ = stream.Close() }()
		var b strings.Builder
		_, _ = io.Copy(&b, stream)
		out <- b.String()
	}()
	return out
}
