package builder

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Options are the operator-wide settings that shape the children.
type Options struct {
	// ClusterDomain, when set (--cluster-domain), fully qualifies the
	// hostnames of the hostfile. Unset, they are "<pod>.<job>", which
	// every Pod resolves through the "<namespace>.svc.<domain>" entry
	// kubelet puts first in its DNS search list, whatever the domain.
	ClusterDomain string
	// SearchDomain is the cluster's DNS domain as the operator knows it
	// (ClusterDomain, or else read from its own resolv.conf). It makes
	// the search entry that lets the job's Pods resolve each other by bare
	// hostname, which MPICH's and Intel MPI's proxies rely on.
	SearchDomain string
	// DNSCachesDenials: the cluster's DNS keeps a name's NXDOMAIN for a
	// while (--dns-caches-denials), so the launcher asks for its workers'
	// names only once told they are published (published.go).
	DNSCachesDenials bool
}

// DefaultSearchDomain is used when the domain is neither given nor found.
const DefaultSearchDomain = "cluster.local"

func (o Options) searchDomain() string {
	switch {
	case o.ClusterDomain != "":
		return o.ClusterDomain
	case o.SearchDomain != "":
		return o.SearchDomain
	}
	return DefaultSearchDomain
}

// Role label values.
const (
	RoleLauncher = "launcher"
	RoleWorker   = "worker"
)

// Where the ConfigMap is mounted, and its keys.
const (
	ConfigMountPath  = "/etc/mpi"
	HostfileKey      = "hostfile"
	DiscoverHostsKey = "discover_hosts.sh"
	HostfilePath     = ConfigMountPath + "/" + HostfileKey
	KnownHostsKey    = "known_hosts"
	KnownHostsPath   = ConfigMountPath + "/" + KnownHostsKey
	SSHConfigKey     = "ssh_config"
	SSHConfigPath    = ConfigMountPath + "/" + SSHConfigKey
	sshVolumeName    = "ssh-auth"
	configVolumeName = "mpi-job-config"
	// Upstream's file names: its images point sshd's HostKey at id_rsa.
	// The key in it is ed25519; ssh and sshd read the type from the file.
	sshPrivateKeyFile  = "id_rsa"
	sshPublicKeyFile   = "id_rsa.pub"
	sshAuthorizedFile  = "authorized_keys"
	defaultSSHDCommand = "/usr/sbin/sshd"
)

// SSHPublicKeyKey is the Secret's key of the public key, as upstream names
// it (the private key's is corev1.SSHAuthPrivateKey).
const SSHPublicKeyKey = "ssh-publickey"

// SSHSecretName is the name of the job's key Secret.
func SSHSecretName(job *kubeflow.MPIJob) string { return job.Name + "-ssh" }

// ConfigMapName is the name of the job's hostfile ConfigMap.
func ConfigMapName(job *kubeflow.MPIJob) string { return job.Name + "-config" }

// ServiceName is the name of the job's headless Service.
func ServiceName(job *kubeflow.MPIJob) string { return job.Name }

// LauncherName is the name of the launcher Job of the job's first attempt
// (upstream's), and the hostname of every launcher Pod.
func LauncherName(job *kubeflow.MPIJob) string { return job.Name + "-launcher" }

// LauncherJobName is the name of the launcher Job after the given number
// of whole-job restarts: upstream's "<job>-launcher" at first, then
// "<job>-launcher-<restarts>". A restart's Job never takes its
// predecessor's name: kube-controller-manager keys its memory of a Job by
// name, and when it lists anew (after an API server restart) a Job
// deleted and made again under one name looks like one Job changed. Its
// expectations and tracking finalizers of the old one then hold the new
// one back (found by make chaos). A name that would pass 63 characters,
// the limit of the Job's name label, is cut, and keeps the start of the
// MPIJob's UID so that two jobs cut alike still differ.
func LauncherJobName(job *kubeflow.MPIJob, restarts int32) string {
	base := LauncherName(job)
	if restarts <= 0 {
		return base
	}
	suffix := "-launcher-" + strconv.Itoa(int(restarts))
	if len(job.Name)+len(suffix) <= maxLabelValue {
		return job.Name + suffix
	}
	tag := string(job.UID)
	if len(tag) > 5 {
		tag = tag[:5]
	}
	suffix = "-" + tag + suffix
	return strings.TrimRight(job.Name[:maxLabelValue-len(suffix)], ".-") + suffix
}

// maxLabelValue is the longest a label value may be.
const maxLabelValue = 63

// WorkerName is the name (and hostname) of worker i.
func WorkerName(job *kubeflow.MPIJob, i int) string {
	return workerNamePrefix(job) + strconv.Itoa(i)
}

// workerNamePrefix is what every worker's name starts with, its index
// following.
func workerNamePrefix(job *kubeflow.MPIJob) string { return job.Name + "-worker-" }

// HostName is the name the hostfile gives a Pod of the job: fully
// qualified when the cluster domain was given, else "<hostname>.<job>",
// which resolves on any cluster (see Options) and keeps a 1000-worker
// hostfile small.
func HostName(job *kubeflow.MPIJob, hostname string, opts Options) string {
	if opts.ClusterDomain == "" {
		return hostname + "." + ServiceName(job)
	}
	return fmt.Sprintf("%s.%s.%s.svc.%s", hostname, ServiceName(job), job.Namespace, opts.ClusterDomain)
}

// JobLabels are the labels every child of the job carries.
func JobLabels(job *kubeflow.MPIJob) map[string]string {
	return map[string]string{
		kubeflow.LabelJobName:      job.Name,
		kubeflow.LabelOperatorName: kubeflow.OperatorName,
	}
}

// RoleLabels are the labels of the Pods of one role.
func RoleLabels(job *kubeflow.MPIJob, role string) map[string]string {
	l := RoleSelectorLabels(job, role)
	l[kubeflow.LabelReplicaType] = role
	return l
}

// RoleSelectorLabels select the Pods of one role: the labels upstream
// gives them too, so that the Pods of a job started by upstream's
// operator are found as well (an operator swap loses nothing).
func RoleSelectorLabels(job *kubeflow.MPIJob, role string) map[string]string {
	l := JobLabels(job)
	l[kubeflow.LabelJobRole] = role
	return l
}

// WorkerSelector selects the job's worker Pods; it is the selector of the
// scale subresource.
func WorkerSelector(job *kubeflow.MPIJob) labels.Selector {
	return labels.SelectorFromSet(RoleSelectorLabels(job, RoleWorker))
}

func workerLabels(job *kubeflow.MPIJob, i int) map[string]string {
	l := RoleLabels(job, RoleWorker)
	l[kubeflow.LabelReplicaIndex] = strconv.Itoa(i + rankOffset(job))
	return l
}

// rankOffset is 1 when the launcher runs ranks: it takes replica index 0
// and the workers follow, so the indices of all Pods of the job are unique
// and follow the ranks (Kueue's topology-aware scheduling relies on it),
// as upstream numbers them.
func rankOffset(job *kubeflow.MPIJob) int {
	if job.Spec.RunLauncherAsWorker != nil && *job.Spec.RunLauncherAsWorker {
		return 1
	}
	return 0
}

// WorkerIndex is the index of the worker Pod of the job with the given
// name, read from the name the controller gave it (the replica-index label
// is shifted when the launcher runs ranks).
func WorkerIndex(job *kubeflow.MPIJob, podName string) (int, bool) {
	suffix, ok := strings.CutPrefix(podName, workerNamePrefix(job))
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(suffix)
	if err != nil || i < 0 || strconv.Itoa(i) != suffix {
		return 0, false
	}
	return i, true
}
