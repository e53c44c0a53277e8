//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
)

// kubeletPid is the pid of the local cluster's kubelet of node (pid files
// beside the kubeconfig: hack/cluster/lib.sh).
func kubeletPid(t *testing.T, node string) int {
	t.Helper()
	name := "kubelet"
	if i := strings.LastIndex(node, "-"); i > 0 {
		if n, err := strconv.Atoi(node[i+1:]); err == nil {
			name += "-" + strconv.Itoa(n)
		}
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(os.Getenv("KUBECONFIG")), "pids", name))
	if err != nil {
		t.Fatalf("the kubelet of %s: %v", node, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestWorkerLostWithItsNodeRestartsOnTheOtherNode: a worker's node goes
// NotReady (its kubelet stopped with SIGSTOP: no more heartbeats, its
// containers left running), the taint manager deletes the worker, and the
// job restarts. The next attempt's Pods keep off that node, even once it
// is Ready again, and the job succeeds on the other. It runs alone (not
// parallel): it takes a node away from every test.
func TestWorkerLostWithItsNodeRestartsOnTheOtherNode(t *testing.T) {
	// The first attempt's launcher waits, to be there when the node goes;
	// the second runs the ranks.
	job := mpiJob(t, openMPI4, false, 2, "sh", "-c",
		`case "$POD_NAME" in *-launcher-1-*) exec mpirun -n 2 /opt/mpi/ranks ;; *) exec sleep 600 ;; esac`)
	l := &job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template.Spec
	l.Containers[0].Env = []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	l.TerminationGracePeriodSeconds = ptr.To[int64](1)
	// Evicted 5 s after their node is unreachable, not the default 300 s.
	w := &job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template.Spec
	for _, key := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
		w.Tolerations = append(w.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](5)})
	}
	create(t, job)
	var node string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, jobTimeout, true, func(ctx context.Context) (bool, error) {
		got := &kubeflow.MPIJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil || !isTrue(got, kubeflow.JobRunning) {
			return false, nil
		}
		for _, p := range workerPods(t, job) {
			if p.Name == job.Name+"-worker-1" && p.Status.Phase == corev1.PodRunning {
				node = p.Spec.NodeName
			}
		}
		return node != "", nil
	})
	if err != nil {
		t.Fatalf("job never Running with worker 1 placed: %v", err)
	}

	pid := kubeletPid(t, node)
	t.Logf("stopping the kubelet of %s (pid %d), where %s-worker-1 runs", node, pid, job.Name)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	defer resume()

	// NotReady after the node monitor's grace period, then the taint
	// manager's deletion, then the restart record.
	var rec jobrecord.Restart
	err = wait.PollUntilContextTimeout(context.Background(), time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		got := &kubeflow.MPIJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return false, nil
		}
		var ok bool
		rec, ok = jobrecord.RestartOf(got)
		return ok, nil
	})
	resume()
	if err != nil {
		t.Fatalf("no restart while %s was NotReady: %v", node, err)
	}
	raw, _ := json.Marshal(rec)
	t.Logf("restart record: %s", raw)
	if !slices.Contains(rec.Avoiding(time.Now()), node) {
		t.Errorf("the restart record avoids %v, not %s", rec.Avoiding(time.Now()), node)
	}

	expectRanksOn(t, job, workerNames(job, 2)...)
	attempt := workerPods(t, job)
	for _, p := range launcherPods(t, job) {
		if strings.HasPrefix(p.Name, job.Name+"-launcher-1-") {
			attempt = append(attempt, p)
		}
	}
	for _, p := range attempt {
		t.Logf("second attempt: %s on %s", p.Name, p.Spec.NodeName)
		if p.Spec.NodeName == node {
			t.Errorf("Pod %s of the new attempt runs on %s, the node the job keeps off", p.Name, node)
		}
	}
	events, err := clientset.CoreV1().Events(job.Namespace).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=AvoidingNode"})
	if err != nil || len(events.Items) == 0 {
		t.Errorf("no AvoidingNode event (%v)", err)
	} else {
		t.Logf("event: %s", events.Items[0].Message)
	}
}
