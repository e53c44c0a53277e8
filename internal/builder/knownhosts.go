package builder

import (
	"path"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// KnownHosts is the job's known_hosts: one line pinning the job's public
// key (an authorized_keys line, as the Secret holds it) for the names the
// workers have in the hostfile. Every worker's sshd presents the job's key
// as its host key, so ssh can check it with StrictHostKeyChecking=yes.
//
// The names are patterns over the worker index, "<job>-worker-*", so the
// file is one short line whatever the job's size, and never changes while
// the job runs, even when it scales: kubelet refreshes a mounted ConfigMap
// only after a delay. Each pattern also comes as "[name]:*", which is how
// ssh looks up a host on a port other than 22 (upstream's images listen on
// 2222). A key that cannot be read gives an empty file: ssh then refuses
// every worker and says so, rather than trusting one it cannot check.
func KnownHosts(job *kubeflow.MPIJob, publicKey []byte, opts Options) string {
	key, _, _, _, err := ssh.ParseAuthorizedKey(publicKey)
	if err != nil {
		return ""
	}
	var patterns []string
	for _, host := range workerNamePatterns(job, opts) {
		patterns = append(patterns, host, "["+host+"]:*")
	}
	return strings.Join(patterns, ",") + " " + string(ssh.MarshalAuthorizedKey(key))
}

// workerNamePatterns match the names a worker can have in the hostfile:
// "<pod>.<job>" without a cluster domain, fully qualified with it. Both
// are pinned whatever the options, so a hostfile of either form (one
// written before the operator's --cluster-domain changed, or a user's own)
// is checked too.
func workerNamePatterns(job *kubeflow.MPIJob, opts Options) []string {
	pod := workerNamePrefix(job) + "*"
	withDomain := opts
	withDomain.ClusterDomain = opts.searchDomain()
	return []string{
		HostName(job, pod, Options{}),
		HostName(job, pod, withDomain),
	}
}

// uncheckedSSHArgs are the ssh options of the versions of this operator
// that did not check host keys.
const uncheckedSSHArgs = "-o ConnectionAttempts=10 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"

// PresentsJobHostKey reports whether a worker Pod was made to present the
// job's key as its host key. A worker that an older version of this
// operator or upstream's made may present its image's own keys (root's
// sshd in upstream's images does), which no known_hosts of ours pins.
func PresentsJobHostKey(pod *corev1.Pod) bool {
	if len(pod.Spec.Containers) == 0 {
		return false
	}
	c := &pod.Spec.Containers[0]
	argv := append(slices.Clone(c.Command), c.Args...)
	for _, m := range c.VolumeMounts {
		if m.Name != sshVolumeName {
			continue
		}
		if m.MountPath == sshdHostKeyFile || m.MountPath == olderSSHDHostKeyFile {
			return true
		}
		// sshd given the key on its command line (addHostKeys).
		key := path.Join(m.MountPath, sshPrivateKeyFile)
		for i := 1; m.SubPath == "" && i+1 < len(argv); i++ {
			if argv[i] == "-h" && argv[i+1] == key {
				return true
			}
		}
	}
	return false
}

// SkipHostKeyCheck gives a launcher Job the ssh options of the versions
// that did not check host keys. It is for a launcher that must reach
// workers made before host keys were checked (a job that an older
// operator started and this one restarts): such a job keeps working as it
// did. A value the template set itself is kept.
func SkipHostKeyCheck(l *batchv1.Job) {
	for i := range l.Spec.Template.Spec.Containers {
		env := l.Spec.Template.Spec.Containers[i].Env
		for j := range env {
			if sshArgsVars[env[j].Name] && env[j].Value == SSHArgs {
				env[j].Value = uncheckedSSHArgs
			}
		}
	}
}

// sshArgsVars are the variables that carry SSHArgs.
var sshArgsVars = map[string]bool{
	"OMPI_MCA_plm_rsh_args":                 true,
	"PRTE_MCA_plm_ssh_args":                 true,
	"I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS": true,
	"HYDRA_LAUNCH_EXTRA_ARGS":               true,
	"HYDRA_LAUNCHER_EXTRA_ARGS":             true,
}
