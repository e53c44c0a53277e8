package builder

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestHostfile(t *testing.T) {
	cases := map[string]struct {
		job  *testjob.Wrapper
		opts Options
		want string
	}{
		"OpenMPI lists each worker as host slots=N": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(2).Slots(4),
			opts: testOpts,
			want: "pi-worker-0.pi.ns.svc.cluster.test slots=4\n" +
				"pi-worker-1.pi.ns.svc.cluster.test slots=4\n",
		},
		"OpenMPI is the default implementation and slots default to 1": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(1),
			opts: testOpts,
			want: "pi-worker-0.pi.ns.svc.cluster.test slots=1\n",
		},
		"Intel MPI lists each worker as host:N": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(2).Slots(2).Implementation(kubeflow.MPIImplementationIntel),
			opts: testOpts,
			want: "pi-worker-0.pi.ns.svc.cluster.test:2\n" +
				"pi-worker-1.pi.ns.svc.cluster.test:2\n",
		},
		"MPICH lists each worker as host:N": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(3).Slots(8).Implementation(kubeflow.MPIImplementationMPICH),
			opts: testOpts,
			want: "pi-worker-0.pi.ns.svc.cluster.test:8\n" +
				"pi-worker-1.pi.ns.svc.cluster.test:8\n" +
				"pi-worker-2.pi.ns.svc.cluster.test:8\n",
		},
		"hosts are qualified with the job's name, namespace and the cluster domain": {
			job:  testjob.MakeMPIJob("train", "team-a").Workers(1),
			opts: Options{ClusterDomain: "corp.example"},
			want: "train-worker-0.train.team-a.svc.corp.example slots=1\n",
		},
		"without a cluster domain hosts are <pod>.<job>, resolvable on any cluster": {
			job:  testjob.MakeMPIJob("train", "team-a").Workers(2).Implementation(kubeflow.MPIImplementationMPICH),
			opts: Options{SearchDomain: "corp.example"},
			want: "train-worker-0.train:1\ntrain-worker-1.train:1\n",
		},
		"OpenMPI with runLauncherAsWorker lists the launcher first, by its own hostname": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(2).Slots(2).LauncherAsWorker(),
			opts: testOpts,
			want: "pi-launcher slots=2\n" +
				"pi-worker-0.pi.ns.svc.cluster.test slots=2\n" +
				"pi-worker-1.pi.ns.svc.cluster.test slots=2\n",
		},
		"Intel MPI with runLauncherAsWorker lists the launcher first": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(1).Slots(3).LauncherAsWorker().Implementation(kubeflow.MPIImplementationIntel),
			opts: testOpts,
			want: "pi-launcher:3\n" +
				"pi-worker-0.pi.ns.svc.cluster.test:3\n",
		},
		"with hostNetwork the launcher is localhost: its hostname is the node's": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(1).LauncherAsWorker().HostNetwork(),
			opts: testOpts,
			want: "localhost slots=1\n" +
				"pi-worker-0.pi.ns.svc.cluster.test slots=1\n",
		},
		"no workers gives an empty hostfile": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(0),
			opts: testOpts,
			want: "",
		},
		"no workers with runLauncherAsWorker lists only the launcher": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(0).LauncherAsWorker(),
			opts: testOpts,
			want: "pi-launcher slots=1\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Hostfile(defaulted(tc.job), tc.opts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Hostfile (-want +got):\n%s", diff)
			}
		})
	}
}

// runScript runs a discover_hosts.sh with the system's POSIX shell and
// returns what it prints.
func runScript(t *testing.T, script string) string {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", script).Output()
	if err != nil {
		t.Fatalf("running discover_hosts.sh: %v\n%s", err, script)
	}
	return string(out)
}

func TestDiscoverHosts(t *testing.T) {
	cases := map[string]struct {
		job     *testjob.Wrapper
		running []int
		want    string
	}{
		"no running worker gives a script printing nothing": {
			job: testjob.MakeMPIJob("pi", "ns").Workers(3),
		},
		"only the given running indices are listed, with slots": {
			job:     testjob.MakeMPIJob("pi", "ns").Workers(4).Slots(2),
			running: []int{0, 2},
			want: "pi-worker-0.pi.ns.svc.cluster.test:2\n" +
				"pi-worker-2.pi.ns.svc.cluster.test:2\n",
		},
		"runs of indices and single ones, in order": {
			job:     testjob.MakeMPIJob("pi", "ns").Workers(12),
			running: []int{0, 1, 2, 5, 7, 8, 10},
			want: "pi-worker-0.pi.ns.svc.cluster.test:1\npi-worker-1.pi.ns.svc.cluster.test:1\npi-worker-2.pi.ns.svc.cluster.test:1\n" +
				"pi-worker-5.pi.ns.svc.cluster.test:1\npi-worker-7.pi.ns.svc.cluster.test:1\npi-worker-8.pi.ns.svc.cluster.test:1\n" +
				"pi-worker-10.pi.ns.svc.cluster.test:1\n",
		},
		"runLauncherAsWorker lists the launcher first": {
			job:     testjob.MakeMPIJob("pi", "ns").Workers(3).Slots(4).LauncherAsWorker(),
			running: []int{1},
			want: "pi-launcher:4\n" +
				"pi-worker-1.pi.ns.svc.cluster.test:4\n",
		},
		"runLauncherAsWorker with no running worker lists the launcher": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(3).LauncherAsWorker(),
			want: "pi-launcher:1\n",
		},
		"the format is Horovod's host:slots whatever the MPI implementation": {
			job:     testjob.MakeMPIJob("pi", "ns").Workers(1).Slots(2).Implementation(kubeflow.MPIImplementationOpenMPI),
			running: []int{0},
			want:    "pi-worker-0.pi.ns.svc.cluster.test:2\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			script := DiscoverHosts(defaulted(tc.job), tc.running, testOpts)
			if !strings.HasPrefix(script, "#!/bin/sh\n") {
				t.Errorf("no #!/bin/sh line: %q", script)
			}
			if diff := cmp.Diff(tc.want, runScript(t, script)); diff != "" {
				t.Errorf("discover_hosts.sh prints (-want +got):\n%s", diff)
			}
			var hosts []string
			for line := range strings.Lines(tc.want) {
				host, _, _ := strings.Cut(line, ":")
				hosts = append(hosts, host)
			}
			if diff := cmp.Diff(hosts, DiscoveredHosts(script)); diff != "" {
				t.Errorf("DiscoveredHosts (-printed +read):\n%s", diff)
			}
		})
	}
}

// Its size grows with the number of runs of running workers, not with
// their names: 10,000 workers running take a line.
func TestDiscoverHostsListsIndicesNotNames(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("a-job-with-a-rather-long-name-of-forty-chars", "ns").Workers(10000))
	all := make([]int, 10000)
	for i := range all {
		all[i] = i
	}
	script := DiscoverHosts(job, all, Options{ClusterDomain: "cluster.local"})
	if len(script) > 300 {
		t.Errorf("discover_hosts.sh of 10,000 running workers takes %d bytes:\n%s", len(script), script)
	}
	printed := strings.Count(runScript(t, script), "\n")
	if printed != 10000 || len(DiscoveredHosts(script)) != 10000 {
		t.Errorf("prints %d hosts and reads as %d, want 10000", printed, len(DiscoveredHosts(script)))
	}
}

func TestConfigMapHoldsHostfileDiscoverHostsAndKnownHosts(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(2).Implementation(kubeflow.MPIImplementationMPICH))
	want := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "pi-config",
			Namespace:       "ns",
			Labels:          jobLabels("pi"),
			OwnerReferences: ownerRefs(job),
		},
		Data: map[string]string{
			"hostfile": "pi-worker-0.pi.ns.svc.cluster.test:1\n" +
				"pi-worker-1.pi.ns.svc.cluster.test:1\n",
			"discover_hosts.sh": "#!/bin/sh\n" +
				"for r in 1; do\n" +
				"  i=${r%-*}\n" +
				"  while [ \"$i\" -le \"${r#*-}\" ]; do\n" +
				"    echo \"pi-worker-$i.pi.ns.svc.cluster.test:1\"\n" +
				"    i=$((i + 1))\n" +
				"  done\n" +
				"done\n",
			"known_hosts": "pi-worker-*.pi,[pi-worker-*.pi]:*," +
				"pi-worker-*.pi.ns.svc.cluster.test,[pi-worker-*.pi.ns.svc.cluster.test]:* " + testPublicKeyNoComment + "\n",
			"ssh_config": "ConnectionAttempts 10\n" +
				"KexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521," +
				"diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256\n" +
				"StrictHostKeyChecking yes\n" +
				"UserKnownHostsFile /etc/mpi/known_hosts\n" +
				"GlobalKnownHostsFile /dev/null\n" +
				"CheckHostIP no\n" +
				"Include /etc/ssh/ssh_config\n",
		},
	}
	got := ConfigMap(job, []int{1}, []byte(testPublicKey), testOpts)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ConfigMap (-want +got):\n%s", diff)
	}
}

func TestHostfileHostsReadsBothSyntaxes(t *testing.T) {
	for _, impl := range []kubeflow.MPIImplementation{kubeflow.MPIImplementationOpenMPI, kubeflow.MPIImplementationMPICH} {
		job := testjob.MakeMPIJob("pi", "ns").Workers(11).Implementation(impl).LauncherAsWorker().Obj()
		kubeflow.SetDefaults(job)
		hostfile := Hostfile(job, Options{})
		hosts := HostfileHosts(hostfile)
		if len(hosts) != 12 || hosts[0] != LauncherName(job) || hosts[2] != HostName(job, WorkerName(job, 1), Options{}) {
			t.Fatalf("%s: hosts %q of %q", impl, hosts, hostfile)
		}
		// Dropping worker 1 leaves worker 10, whose name it begins.
		left := HostfileWithout(hostfile, map[string]bool{hosts[2]: true})
		if got := HostfileHosts(left); len(got) != 11 || slices.Contains(got, hosts[2]) || !slices.Contains(got, hosts[11]) {
			t.Errorf("%s: without %s: %q", impl, hosts[2], got)
		}
	}
}

// BenchmarkHostfile builds a 10,000-worker job's hostfile, as every
// reconcile of it does (ensureConfigMap compares the ConfigMap whole).
func BenchmarkHostfile(b *testing.B) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(10_000).Obj()
	kubeflow.SetDefaults(job)
	opts := Options{ClusterDomain: "cluster.local"}
	for b.Loop() {
		_ = Hostfile(job, opts)
	}
}
