package integration

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
	"github.com/mpi-operator/mpi-operator/test/upstream"
)

// upstreamDeployment renders upstream's standalone install with kustomize
// (kubectl's) and returns its Deployment.
func upstreamDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	out, err := exec.Command("kubectl", "kustomize", filepath.Join(upstream.Dir(t), "manifests", "overlays", "standalone")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize upstream's manifests: %v", err)
	}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		d := &appsv1.Deployment{}
		if err := yaml.Unmarshal([]byte(doc), d); err == nil && d.Kind == "Deployment" {
			return d
		}
	}
	t.Fatal("no Deployment in upstream's manifests")
	return nil
}

// syncBuffer collects a process's output while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestUpstreamDeploymentStartsThisBinary runs this operator's binary with
// the arguments and environment of upstream's own Deployment (only the
// image differs): it must start, take the leader lease in the namespace
// upstream's --lock-namespace names, and run MPIJobs.
func TestUpstreamDeploymentStartsThisBinary(t *testing.T) {
	d := upstreamDeployment(t)
	c := d.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 0 {
		t.Fatalf("upstream's Deployment now sets a command %q: update this test", c.Command)
	}
	lockNS := d.Namespace
	t.Logf("upstream's Deployment: args %q, namespace %s", c.Args, lockNS)
	// Our Role grants the Lease in our install's namespace only; upstream's
	// arguments work as they are because both namespaces are mpi-operator.
	if !slices.Contains(operatorLeaseNamespaces, lockNS) {
		t.Fatalf("upstream locks in %q, config/rbac's Role grants leases in %q only", lockNS, operatorLeaseNamespaces)
	}

	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lockNS}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	// The job is held off the in-process controller, so that only the
	// binary can make its children.
	ns := newNamespace(t)
	const hold = "reconciled-by-the-binary"
	r.Expectations.ExpectCreations(ns+"/pi", hold)
	t.Cleanup(func() { r.Expectations.CreationObserved(ns+"/pi", hold) })

	// In a Pod the metrics and probe ports are the Pod's own; here they
	// would be the machine's, so the harness turns them off after
	// upstream's arguments.
	args := append(append([]string{}, c.Args...), "--metrics-bind-address=0", "--health-probe-bind-address=0")
	var env []string
	for _, e := range c.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	op := startOperatorBinary(t, operatorKubeconfig, args, env)
	op.waitForLease(t, lockNS)
	job := createJob(t, testjob.MakeMPIJob("pi", ns).Workers(2).Obj())
	waitWorkers(t, job, 2)
	launcherJob(t, job)
	waitCondition(t, job, kubeflow.JobCreated, corev1.ConditionTrue)
	for _, want := range []string{"--lock-namespace (kubeflow/mpi-operator's) taken as --leader-election-namespace", "[-alsologtostderr] accepted and ignored"} {
		if !strings.Contains(op.logs.String(), want) {
			t.Errorf("the binary's log does not say %q", want)
		}
	}
}
