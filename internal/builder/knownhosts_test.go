package builder

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// Public keys in the Secret's format (authorized_keys lines): this
// operator's ed25519 key, and the ECDSA P-521 key upstream's operator makes.
const (
	testPublicKey          = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdxedbaI4eiOUxVI0rRXAvusP1f0BR0qidobeq6ww6p pi\n"
	testPublicKeyNoComment = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdxedbaI4eiOUxVI0rRXAvusP1f0BR0qidobeq6ww6p"
	upstreamPublicKey      = "ecdsa-sha2-nistp521 AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjEAAACFBADuIMi1KS4pZWpj9k/cxPpUXDhoqFKV2CSZtRIaUMw2RPZIvBIav6r5l03rgi9QGYFALLA6L3GLQYWYrf8hdzJQZADEPOURQomyrjdvKkY4Q1x6IeZGoUZDUrVr2oiLBzWCuYfpZ4TaGHHXtmPzUR2D2f4/IU6mXqkfJ0/UWGVtJMbPZw==\n"
)

func TestKnownHostsPinsTheJobsKeyForItsWorkerNamesOnly(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(2))
	for name, tc := range map[string]struct {
		opts Options
		key  string
		want string
	}{
		"no cluster domain: short names, and fully qualified under the domain found": {
			opts: Options{SearchDomain: "corp.example"},
			key:  testPublicKey,
			want: "pi-worker-*.pi,[pi-worker-*.pi]:*,pi-worker-*.pi.ns.svc.corp.example,[pi-worker-*.pi.ns.svc.corp.example]:* " +
				testPublicKeyNoComment + "\n",
		},
		"nothing known of the domain: cluster.local": {
			key: testPublicKey,
			want: "pi-worker-*.pi,[pi-worker-*.pi]:*,pi-worker-*.pi.ns.svc.cluster.local,[pi-worker-*.pi.ns.svc.cluster.local]:* " +
				testPublicKeyNoComment + "\n",
		},
		"cluster domain given: the hostfile's fully qualified names": {
			opts: testOpts,
			key:  testPublicKey,
			want: "pi-worker-*.pi,[pi-worker-*.pi]:*,pi-worker-*.pi.ns.svc.cluster.test,[pi-worker-*.pi.ns.svc.cluster.test]:* " +
				testPublicKeyNoComment + "\n",
		},
		"upstream's ECDSA key, of a job whose Secret upstream's operator made": {
			opts: testOpts,
			key:  upstreamPublicKey,
			want: "pi-worker-*.pi,[pi-worker-*.pi]:*,pi-worker-*.pi.ns.svc.cluster.test,[pi-worker-*.pi.ns.svc.cluster.test]:* " +
				upstreamPublicKey,
		},
		"a key that cannot be read trusts no host": {
			opts: testOpts,
			key:  "ecdsa-sha2-nistp521 AAAA",
			want: "",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := KnownHosts(job, []byte(tc.key), tc.opts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("KnownHosts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkersOfOlderOperatorsAreToldApart(t *testing.T) {
	job := defaulted(testjob.MakeMPIJob("pi", "ns").Workers(1))
	if ours := WorkerPod(job, 0, testOpts); !PresentsJobHostKey(ours) {
		t.Error("a worker of this operator does not present the job's key")
	}
	mounted := WorkerPod(job, 0, testOpts)
	mounted.Spec.Containers[0].Args = nil
	mounted.Spec.Containers[0].VolumeMounts = workerMounts("/root/.ssh")
	if !PresentsJobHostKey(mounted) {
		t.Error("a worker whose command is not sshd (the key mounted over the default file) does not present the job's key")
	}
	threeKeys := WorkerPod(job, 0, testOpts)
	threeKeys.Spec.Containers[0].Args = nil
	threeKeys.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{sshMount("/root/.ssh"),
		{Name: "ssh-auth", MountPath: "/etc/ssh/ssh_host_rsa_key", SubPath: "id_rsa", ReadOnly: true}}
	if !PresentsJobHostKey(threeKeys) {
		t.Error("a worker of the versions that mounted the job's key over every default host key file does not present it")
	}
	older := WorkerPod(job, 0, testOpts)
	older.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{sshMount("/root/.ssh")}
	older.Spec.Containers[0].Args = nil
	if PresentsJobHostKey(older) {
		t.Error("a worker with the keys at sshAuthMountPath alone (older operators, upstream's) presents the job's key")
	}
	older.Spec.Containers = nil
	if PresentsJobHostKey(older) {
		t.Error("a worker without containers presents the job's key")
	}
}

func TestSkipHostKeyCheckGivesTheOlderOptionsAndKeepsTheUsers(t *testing.T) {
	for _, impl := range []kubeflow.MPIImplementation{kubeflow.MPIImplementationOpenMPI, kubeflow.MPIImplementationIntel, kubeflow.MPIImplementationMPICH} {
		job := defaulted(testjob.MakeMPIJob("pi", "ns").Implementation(impl))
		launcherTemplate(job).Spec.Containers[0].Env = []corev1.EnvVar{{Name: "HYDRA_LAUNCH_EXTRA_ARGS", Value: "-o Mine=yes"}}
		l := LauncherJob(job, false, testOpts)
		SkipHostKeyCheck(l)
		env := l.Spec.Template.Spec.Containers[0].Env
		for _, e := range env[:len(env)-1] {
			if strings.HasSuffix(e.Name, "_ARGS") || strings.HasSuffix(e.Name, "_args") {
				if e.Value != "-o ConnectionAttempts=10 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR" {
					t.Errorf("%s: %s=%q, want the older options", impl, e.Name, e.Value)
				}
			}
		}
		if got := env[len(env)-1]; got.Value != "-o Mine=yes" {
			t.Errorf("%s: the template's own value was changed: %+v", impl, got)
		}
	}
}
