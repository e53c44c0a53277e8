package builder

import (
	"strings"

	"golang.org/x/crypto/ssh"

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
