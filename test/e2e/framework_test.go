//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// jobTimeout bounds one job; it is a failure deadline, not a measurement.
const jobTimeout = 5 * time.Minute

var (
	k8s       client.Client
	clientset *kubernetes.Clientset
	nsCounter atomic.Int32
	runID     = strconv.FormatInt(time.Now().Unix()%100000, 10)
)

func TestMain(m *testing.M) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "no cluster: run hack/cluster/up.sh (make test-e2e does):", err)
		os.Exit(1)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflow.AddToScheme(scheme))
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	clientset = kubernetes.NewForConfigOrDie(cfg)
	if raceImage != "" {
		os.Exit(runWithRaceImage(m.Run))
	}
	os.Exit(m.Run())
}

// image is one of the project's MPI images and how to run as its users.
type image struct {
	name string
	impl kubeflow.MPIImplementation
}

var (
	openMPI4 = image{"openmpi", kubeflow.MPIImplementationOpenMPI}
	openMPI5 = image{"openmpi5", kubeflow.MPIImplementationOpenMPI}
	mpich    = image{"mpich", kubeflow.MPIImplementationMPICH}
)

// mpiJob builds an MPIJob running command on the launcher with n workers
// of the image, as root or as mpiuser (uid 1000, keys in
// /home/mpiuser/.ssh, sshd on port 2222).
func mpiJob(t *testing.T, img image, nonRoot bool, workers int32, command ...string) *kubeflow.MPIJob {
	t.Helper()
	return mpiJobIn(newNamespace(t), "mpi", img, nonRoot, workers, command...)
}

// mpiJobIn is mpiJob named name in the namespace ns, for tests that run
// more than one job in a namespace.
func mpiJobIn(ns, name string, img image, nonRoot bool, workers int32, command ...string) *kubeflow.MPIJob {
	ref := "mpi-operator.local/" + img.name + ":e2e"
	container := func(cname string, cmd []string) corev1.Container {
		c := corev1.Container{Name: cname, Image: ref, ImagePullPolicy: corev1.PullNever, Command: cmd}
		if nonRoot {
			c.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}
		}
		return c
	}
	var workerCmd []string
	job := &kubeflow.MPIJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: kubeflow.MPIJobSpec{
			MPIImplementation: img.impl,
			MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
				kubeflow.MPIReplicaTypeLauncher: {Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{container("launcher", command)},
				}}},
			},
		},
	}
	if nonRoot {
		job.Spec.SSHAuthMountPath = "/home/mpiuser/.ssh"
		workerCmd = []string{"/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"}
	}
	job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker] = &kubeflow.ReplicaSpec{
		Replicas: ptr.To(workers),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container("worker", workerCmd)}}},
	}
	return job
}

// newNamespace creates a namespace for one test, deleted after it unless
// the test failed (its objects are then left to look at).
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-%s-%d", runID, nsCounter.Add(1))}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = k8s.Delete(context.Background(), ns)
		}
	})
	return ns.Name
}

func create(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	if err := k8s.Create(context.Background(), job); err != nil {
		t.Fatalf("creating MPIJob: %v", err)
	}
}

// waitFinished waits until the job Succeeded or Failed and returns it.
func waitFinished(t *testing.T, job *kubeflow.MPIJob) *kubeflow.MPIJob {
	t.Helper()
	got := &kubeflow.MPIJob{}
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, jobTimeout, true, func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return false, nil
		}
		return isTrue(got, kubeflow.JobSucceeded) || isTrue(got, kubeflow.JobFailed), nil
	})
	if err != nil {
		t.Fatalf("MPIJob %s/%s did not finish: conditions %+v\n%s", job.Namespace, job.Name, got.Status.Conditions, launcherLogs(t, job))
	}
	return got
}

func isTrue(job *kubeflow.MPIJob, ct kubeflow.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == ct {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func condition(job *kubeflow.MPIJob, ct kubeflow.JobConditionType) kubeflow.JobCondition {
	for _, c := range job.Status.Conditions {
		if c.Type == ct {
			return c
		}
	}
	return kubeflow.JobCondition{}
}

// launcherPods lists the Pods of the job's launcher Jobs (one per
// attempt: a restart makes a new Job), oldest first.
func launcherPods(t *testing.T, job *kubeflow.MPIJob) []corev1.Pod {
	t.Helper()
	pods, err := clientset.CoreV1().Pods(job.Namespace).List(context.Background(), metav1.ListOptions{
		LabelSelector: kubeflow.LabelJobName + "=" + job.Name + "," + kubeflow.LabelJobRole + "=launcher",
	})
	if err != nil {
		t.Fatal(err)
	}
	items := pods.Items
	for i := range items {
		for j := i + 1; j < len(items); j++ {
			if items[j].CreationTimestamp.Before(&items[i].CreationTimestamp) {
				items[i], items[j] = items[j], items[i]
			}
		}
	}
	return items
}

// launcherLogs returns the output of the job's last launcher Pod.
func launcherLogs(t *testing.T, job *kubeflow.MPIJob) string {
	t.Helper()
	pods := launcherPods(t, job)
	if len(pods) == 0 {
		return "(no launcher Pod)"
	}
	raw, err := clientset.CoreV1().Pods(job.Namespace).GetLogs(pods[len(pods)-1].Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		return fmt.Sprintf("(no logs: %v)", err)
	}
	return string(raw)
}

var rankLine = regexp.MustCompile(`^RANK (\d+) HOST (\S+)$`)

// ranksOn parses the output of /opt/mpi/ranks: the host of each rank, and
// whether its Allreduce check passed.
func ranksOn(out string) (map[int]string, bool) {
	hosts := map[int]string{}
	ok := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := rankLine.FindStringSubmatch(line); m != nil {
			r, _ := strconv.Atoi(m[1])
			hosts[r] = m[2]
		}
		if strings.HasPrefix(line, "ALLREDUCE ") && strings.HasSuffix(line, " OK") {
			ok = true
		}
	}
	return hosts, ok
}

// expectRanksOn checks that the job succeeded and that rank i ran on
// hosts[i], every host distinct, with a correct Allreduce.
func expectRanksOn(t *testing.T, job *kubeflow.MPIJob, hosts ...string) {
	t.Helper()
	got := waitFinished(t, job)
	out := launcherLogs(t, job)
	if !isTrue(got, kubeflow.JobSucceeded) {
		t.Fatalf("job did not succeed: %+v\nlauncher output:\n%s", condition(got, kubeflow.JobFailed), out)
	}
	ranks, ok := ranksOn(out)
	if !ok {
		t.Errorf("no correct Allreduce in the launcher output:\n%s", out)
	}
	if len(ranks) != len(hosts) {
		t.Fatalf("%d ranks reported, want %d:\n%s", len(ranks), len(hosts), out)
	}
	seen := map[string]bool{}
	for r, want := range hosts {
		if ranks[r] != want {
			t.Errorf("rank %d ran on %q, want %q", r, ranks[r], want)
		}
		if seen[ranks[r]] {
			t.Errorf("two ranks ran on %s", ranks[r])
		}
		seen[ranks[r]] = true
	}
	t.Logf("ranks: %v", ranks)
}

func workerNames(job *kubeflow.MPIJob, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-worker-%d", job.Name, i))
	}
	return out
}
