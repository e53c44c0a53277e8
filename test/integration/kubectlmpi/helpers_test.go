package kubectlmpi

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/kubectlmpi"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
	"github.com/mpi-operator/mpi-operator/internal/testpod"
	"github.com/mpi-operator/mpi-operator/test/integration/envtestutil"
)

// newNamespace makes a namespace of its own for a test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kubectl-mpi-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	return ns.Name
}

// createJob makes an MPIJob of n workers and writes the given status, as
// the operator would have.
func createJob(t *testing.T, ns, name string, n int32, annotations map[string]string, conds ...kubeflow.JobCondition) *kubeflow.MPIJob {
	t.Helper()
	job := testjob.MakeMPIJob(name, ns).Workers(n).Obj()
	job.Annotations = annotations
	if err := k8s.Create(context.Background(), job); err != nil {
		t.Fatalf("creating MPIJob: %v", err)
	}
	setConditions(t, job, conds...)
	return job
}

func setConditions(t *testing.T, job *kubeflow.MPIJob, conds ...kubeflow.JobCondition) {
	t.Helper()
	if len(conds) == 0 {
		return
	}
	job.Status.Conditions = conds
	if err := k8s.Status().Update(context.Background(), job); err != nil {
		t.Fatalf("writing the MPIJob's status: %v", err)
	}
}

// condition is a condition that changed now.
func condition(t kubeflow.JobConditionType, s corev1.ConditionStatus, reason, msg string) kubeflow.JobCondition {
	now := metav1.Now()
	return kubeflow.JobCondition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: now, LastUpdateTime: now}
}

// createPod makes the Pod w describes, on its node if it has one, then
// writes its status as the kubelet would have.
func createPod(t *testing.T, w *testpod.Wrapper) *corev1.Pod {
	t.Helper()
	want := w.Obj()
	pod := want.DeepCopy()
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatalf("creating Pod %s: %v", want.Name, err)
	}
	setPodStatus(t, pod, want.Status)
	return pod
}

// setPodStatus writes a Pod's status, as the scheduler or kubelet would.
func setPodStatus(t *testing.T, pod *corev1.Pod, status corev1.PodStatus) {
	t.Helper()
	pod.Status = status
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("writing the status of Pod %s: %v", pod.Name, err)
	}
}

// runPlugin runs `kubectl mpi ARGS --kubeconfig ...` and returns what it
// printed on stdout and stderr.
func runPlugin(ctx context.Context, opts kubectlmpi.Options, out, errOut *syncBuffer, args ...string) error {
	opts.Streams = genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
	cmd := kubectlmpi.NewCommand(opts)
	cmd.SetArgs(append(args, "--kubeconfig", kubeconfig))
	return cmd.ExecuteContext(ctx)
}

// mpi runs the plugin to its end and fails the test on an error.
func mpi(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut syncBuffer
	if err := runPlugin(context.Background(), kubectlmpi.Options{}, &out, &errOut, args...); err != nil {
		t.Fatalf("kubectl mpi %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// syncBuffer is a buffer that a command running in another goroutine
// writes while the test reads it.
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

// waitForOutput waits until the buffer holds want.
func waitForOutput(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	envtestutil.Eventually(t, "output "+want, func(context.Context) (bool, error) {
		return strings.Contains(b.String(), want), nil
	})
}

// rows splits a table into its rows' fields, header first.
func rows(table string) [][]string {
	var out [][]string
	for line := range strings.Lines(table) {
		out = append(out, strings.Fields(line))
	}
	return out
}

// hasRow reports whether a line of text starts with the given fields.
func hasRow(text string, fields ...string) bool {
	for _, r := range rows(text) {
		if len(r) >= len(fields) && slices.Equal(r[:len(fields)], fields) {
			return true
		}
	}
	return false
}
