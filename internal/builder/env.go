package builder

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// SSHArgs are the options mpirun passes to ssh: the job's ssh_config. A
// file, not -o options: Open MPI 5 (PRRTE) hands plm_ssh_args on to the
// daemons it starts, which start others over ssh (tree spawn), cut at the
// first "=" ("-o ConnectionAttempts"), and ssh then refuses to run.
const SSHArgs = "-F " + SSHConfigPath

// SSHConfig is the ssh client configuration of the job (SSHArgs). Every
// worker's sshd presents the job's key as its host key, and the job's
// known_hosts pins that key for the workers' names, so ssh checks it and
// trusts nothing else: not the image's global known_hosts, not a Pod's IP
// address (Pods come and go; CheckHostIP is on by default in OpenSSH
// before 8.5). Connection attempts ride out a worker whose sshd is not
// listening yet. -F replaces the image's own configuration, so it is
// included last: ssh keeps the first value it reads, so ours win, and the
// image's others still apply (upstream's images set Port 2222 there).
//
// KexAlgorithms is OpenSSH 8's default list, which every OpenSSH since 7.4
// knows, without the post-quantum hybrids that 9.0 and later put first:
// sntrup761x25519 costs each connection CPU at both ends
// (docs/records/measurements.md), and a job opens one per worker, all at
// once, while its ranks start. The keys it protects are
// the job's own, made for it and gone with it, and the ranks' traffic
// does not go through ssh. A whole list, not "^..." ("put these first"),
// which older clients do not know; every name in it is known since 7.4.
const SSHConfig = `ConnectionAttempts 10
KexAlgorithms ` + sshKexAlgorithms + `
StrictHostKeyChecking yes
UserKnownHostsFile ` + KnownHostsPath + `
GlobalKnownHostsFile /dev/null
CheckHostIP no
Include /etc/ssh/ssh_config
`

// sshKexAlgorithms are the key exchange methods the job's ssh offers, in
// its order of preference (SSHConfig).
const sshKexAlgorithms = "curve25519-sha256,curve25519-sha256@libssh.org," +
	"ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521," +
	"diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256"

// launcherEnv is the environment that points the job's MPI implementation
// at the hostfile and at ssh.
//
// Open MPI gets both its ORTE (v4) and PRRTE (v5) names: each version
// silently ignores the other's, and an Open MPI 5 image given only the ORTE
// names runs every rank on the launcher and still exits 0.
func launcherEnv(job *kubeflow.MPIJob) []corev1.EnvVar {
	slots := strconv.Itoa(int(*job.Spec.SlotsPerWorker))
	env := []corev1.EnvVar{{Name: EnvJobRole, Value: RoleLauncher}}
	switch job.Spec.MPIImplementation {
	case kubeflow.MPIImplementationOpenMPI:
		env = append(env,
			corev1.EnvVar{Name: "OMPI_MCA_orte_default_hostfile", Value: HostfilePath},
			corev1.EnvVar{Name: "OMPI_MCA_orte_keep_fqdn_hostnames", Value: "true"},
			corev1.EnvVar{Name: "OMPI_MCA_orte_set_default_slots", Value: slots},
			corev1.EnvVar{Name: "OMPI_MCA_plm_rsh_args", Value: SSHArgs},
			corev1.EnvVar{Name: "PRTE_MCA_prte_default_hostfile", Value: HostfilePath},
			corev1.EnvVar{Name: "PRTE_MCA_prte_keep_fqdn_hostnames", Value: "true"},
			corev1.EnvVar{Name: "PRTE_MCA_prte_set_default_slots", Value: slots},
			corev1.EnvVar{Name: "PRTE_MCA_plm_ssh_args", Value: SSHArgs},
		)
	case kubeflow.MPIImplementationIntel:
		env = append(env,
			corev1.EnvVar{Name: "I_MPI_HYDRA_HOST_FILE", Value: HostfilePath},
			corev1.EnvVar{Name: "I_MPI_PERHOST", Value: slots},
			corev1.EnvVar{Name: "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", Value: SSHArgs},
		)
	case kubeflow.MPIImplementationMPICH:
		env = append(env,
			corev1.EnvVar{Name: "HYDRA_HOST_FILE", Value: HostfilePath},
			// HYDRA_LAUNCH_EXTRA_ARGS is upstream's name, which no hydra
			// reads; hydra's own is HYDRA_LAUNCHER_EXTRA_ARGS.
			corev1.EnvVar{Name: "HYDRA_LAUNCH_EXTRA_ARGS", Value: SSHArgs},
			corev1.EnvVar{Name: "HYDRA_LAUNCHER_EXTRA_ARGS", Value: SSHArgs},
		)
	}
	if !*job.Spec.RunLauncherAsWorker {
		// A launcher that runs no ranks must not grab the node's GPUs.
		env = append(env,
			corev1.EnvVar{Name: "NVIDIA_VISIBLE_DEVICES"},
			corev1.EnvVar{Name: "NVIDIA_DRIVER_CAPABILITIES"},
		)
	}
	return env
}
