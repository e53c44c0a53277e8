//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// impostorSSHD is a worker command whose sshd presents a host key of its
// own, of the job key's type, ahead of the job's: sshd offers the first
// key of a type, and -o comes before its configuration files.
func impostorSSHD(sshdArgs ...string) []string {
	return []string{"sh", "-c", "ssh-keygen -q -t ed25519 -N '' -f /tmp/impostor && exec /usr/sbin/sshd -De -o HostKey=/tmp/impostor " +
		strings.Join(sshdArgs, " ")}
}

// TestImpostorWorkerIsRefused: a worker whose sshd presents another host
// key than the job's is refused by ssh, for every image and user of the
// matrix, so host-key checking is really on wherever TestRanksRunOnTheirWorkers
// and TestExamplePi run. (With checking off, ssh would log in and
// the job would succeed.)
func TestImpostorWorkerIsRefused(t *testing.T) {
	for _, img := range []image{openMPI4, openMPI5, mpich} {
		for _, nonRoot := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nonroot=%t", img.name, nonRoot), func(t *testing.T) {
				t.Parallel()
				job := mpiJob(t, img, nonRoot, 1, "mpirun", "-n", "1", "/opt/mpi/ranks")
				var args []string
				if nonRoot {
					args = []string{"-f", "/home/mpiuser/.sshd_config"}
				}
				job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template.Spec.Containers[0].Command = impostorSSHD(args...)
				refuseOnce(job)
				create(t, job)
				expectHostKeyRefused(t, job)
			})
		}
	}
}

// refuseOnce makes the job fail at its launcher's first failure, keeping
// the failed Pod and its logs.
func refuseOnce(job *kubeflow.MPIJob) {
	job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](0)
	job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].RestartPolicy = kubeflow.RestartPolicyNever
}

// sshdClosedBeforeAuth is what a worker's sshd (-e: to its log) says of a
// client that hangs up before authenticating, as ssh does when it refuses
// the host key; a client let in is "Accepted".
var sshdClosedBeforeAuth = regexp.MustCompile(`Connection closed by \S+ port \d+ \[preauth\]`)

// expectHostKeyRefused checks that the job failed because ssh refused the
// worker's host key.
func expectHostKeyRefused(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	got := waitFinished(t, job)
	out, sshd := launcherLogs(t, job), workerLogs(t, job)
	if !isTrue(got, kubeflow.JobFailed) {
		t.Fatalf("job did not fail with an impostor worker: %+v\nlauncher output:\n%s\nworkers:\n%s", got.Status.Conditions, out, sshd)
	}
	if strings.Contains(sshd, "Accepted ") {
		t.Fatalf("the impostor worker let the launcher log in:\n%s", sshd)
	}
	// ssh prints the "changed" banner only on a key that differs from
	// known_hosts, and ends with "Host key verification failed" when it
	// refuses. MPICH's mpiexec may stop forwarding the proxy's stderr as
	// soon as ssh exits, losing those lines (the last was lost once in
	// CI); the worker's sshd saying that the launcher hung up before
	// authenticating, with no login and the job failed, is the same proof:
	// with checking off ssh would log in and the program would succeed.
	refused := strings.Contains(out, "Host key verification failed") || strings.Contains(out, "REMOTE HOST IDENTIFICATION HAS CHANGED")
	if !refused && !sshdClosedBeforeAuth.MatchString(sshd) {
		t.Fatalf("the launcher did not refuse the worker's host key:\n%s\nworkers:\n%s", out, sshd)
	}
	t.Logf("launcher output:\n%s\nworkers:\n%s", out, sshd)
}

// workerLogs returns each worker's container log, after when each
// container of the job's Pods started and ended: what a failure needs to
// tell a worker that started late from one that misbehaved.
func workerLogs(t *testing.T, job *kubeflow.MPIJob) string {
	t.Helper()
	var b strings.Builder
	workers := workerPods(t, job)
	for _, p := range append(launcherPods(t, job), workers...) {
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			switch s := c.State; {
			case s.Running != nil:
				fmt.Fprintf(&b, "%s/%s: started %s\n", p.Name, c.Name, s.Running.StartedAt.Format(time.RFC3339))
			case s.Terminated != nil:
				fmt.Fprintf(&b, "%s/%s: started %s, exited %d at %s\n", p.Name, c.Name,
					s.Terminated.StartedAt.Format(time.RFC3339), s.Terminated.ExitCode, s.Terminated.FinishedAt.Format(time.RFC3339))
			default:
				fmt.Fprintf(&b, "%s/%s: not started\n", p.Name, c.Name)
			}
		}
	}
	for _, p := range workers {
		raw, err := clientset.CoreV1().Pods(job.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Timestamps: true}).DoRaw(context.Background())
		if err != nil {
			fmt.Fprintf(&b, "%s: no log: %v\n", p.Name, err)
			continue
		}
		fmt.Fprintf(&b, "%s:\n%s", p.Name, raw)
	}
	return b.String()
}

// TestUpstreamImpostorWorkerIsRefused is TestImpostorWorkerIsRefused with
// upstream's images, whose ssh_config turns host-key checking off: the
// options mpirun passes to ssh win over it.
func TestUpstreamImpostorWorkerIsRefused(t *testing.T) {
	for _, file := range []string{"pi.yaml", "pi-mpich.yaml"} {
		t.Run(file, func(t *testing.T) {
			doc := upstreamFile(t, "examples/v2beta1/pi/"+file)
			ns := newNamespace(t)
			job := createRaw(t, ns, edited(t, doc, func(job map[string]any) {
				spec := job["spec"].(map[string]any)
				spec["runPolicy"].(map[string]any)["backoffLimit"] = 0
				specs := spec["mpiReplicaSpecs"].(map[string]any)
				specs["Launcher"].(map[string]any)["restartPolicy"] = "Never"
				replicaSpecs(job, func(role string, _, c map[string]any) {
					if role == "Worker" {
						specs[role].(map[string]any)["replicas"] = 1
						c["command"] = impostorSSHD("-f", "/home/mpiuser/.sshd_config")
						delete(c, "args")
					}
					if role == "Launcher" {
						// The launcher runs pi on the single worker.
						c["command"], c["args"] = []any{"mpirun"}, []any{"-n", "1", "/home/mpiuser/pi"}
					}
				})
			}), "application/json")
			expectHostKeyRefused(t, job)
		})
	}
}

// expectHostKeysChecked checks that the launcher ran mpirun with ssh
// reading the job's ssh_config, which checks host keys against the job's
// known_hosts.
func expectHostKeysChecked(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	cm, err := clientset.CoreV1().ConfigMaps(job.Namespace).Get(context.Background(), job.Name+"-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := cm.Data["ssh_config"]; !strings.Contains(c, "StrictHostKeyChecking yes\nUserKnownHostsFile /etc/mpi/known_hosts\n") {
		t.Errorf("the job's ssh_config does not check host keys against its known_hosts:\n%s", c)
	}
	pods := launcherPods(t, job)
	if len(pods) == 0 {
		t.Fatal("no launcher Pod")
	}
	names := map[string]bool{"OMPI_MCA_plm_rsh_args": true, "PRTE_MCA_plm_ssh_args": true, "HYDRA_LAUNCHER_EXTRA_ARGS": true}
	found := 0
	for _, e := range pods[len(pods)-1].Spec.Containers[0].Env {
		if !names[e.Name] {
			continue
		}
		found++
		if e.Value != "-F /etc/mpi/ssh_config" {
			t.Errorf("%s=%q, want the job's ssh_config", e.Name, e.Value)
		}
	}
	if found == 0 {
		t.Errorf("the launcher has no ssh options: %+v", pods[len(pods)-1].Spec.Containers[0].Env)
	}
}

var acceptedFrom = regexp.MustCompile(`Accepted publickey for \S+ from (\S+)`)

// TestTreeSpawnChecksHostKeysToo: with Open MPI's tree spawn (forced here
// with a routing tree of radix 1: mpirun starts the first worker's daemon,
// which starts the second's, and so on), a worker's daemon reaches the
// other workers over ssh with the job's key and known_hosts.
func TestTreeSpawnChecksHostKeysToo(t *testing.T) {
	for _, img := range []image{openMPI4, openMPI5} {
		for _, nonRoot := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nonroot=%t", img.name, nonRoot), func(t *testing.T) {
				t.Parallel()
				job := mpiJob(t, img, nonRoot, 3, "mpirun", "-n", "3", "/opt/mpi/ranks")
				job.Spec.RunPolicy.CleanPodPolicy = ptr.To(kubeflow.CleanPodPolicyNone)
				launcher := &job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template.Spec.Containers[0]
				launcher.Env = []corev1.EnvVar{
					{Name: "OMPI_MCA_routed", Value: "radix"},
					{Name: "OMPI_MCA_routed_radix", Value: "1"},
					{Name: "PRTE_MCA_routed", Value: "radix"},
					{Name: "PRTE_MCA_routed_radix", Value: "1"},
				}
				create(t, job)
				expectRanksOn(t, job, workerNames(job, 3)...)
				expectHostKeysChecked(t, job)
				expectLoginFromAWorker(t, job)
			})
		}
	}
}

// expectLoginFromAWorker checks from the workers' sshd logs that some
// worker let in another worker, not only the launcher.
func expectLoginFromAWorker(t *testing.T, job *kubeflow.MPIJob) {
	t.Helper()
	pods := workerPods(t, job)
	ips := map[string]string{}
	for _, p := range pods {
		ips[p.Status.PodIP] = p.Name
	}
	var logins []string
	fromWorker := false
	for _, p := range pods {
		raw, err := clientset.CoreV1().Pods(job.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range acceptedFrom.FindAllStringSubmatch(string(raw), -1) {
			from, ok := ips[m[1]]
			if !ok {
				from = m[1]
			}
			fromWorker = fromWorker || ok
			logins = append(logins, from+" -> "+p.Name)
		}
	}
	if fromWorker {
		t.Logf("logins: %v", logins)
		return
	}
	t.Errorf("no worker logged in to another, only %v: the daemons were not spawned as a tree", logins)
}
