package builder

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/labels"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Options are the operator-wide settings that shape the children.
type Options struct {
	// ClusterDomain is the DNS domain of the cluster (kubelet's
	// --cluster-domain). Hostnames in the hostfile are fully qualified with
	// it so the resolver never walks its search list.
	ClusterDomain string
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
	sshVolumeName    = "ssh-auth"
	configVolumeName = "mpi-job-config"
	// Upstream's file names: its images point sshd's HostKey at id_rsa.
	// The key in it is ed25519; ssh and sshd read the type from the file.
	sshPrivateKeyFile  = "id_rsa"
	sshPublicKeyFile   = "id_rsa.pub"
	sshAuthorizedFile  = "authorized_keys"
	defaultSSHDCommand = "/usr/sbin/sshd"
)

// SSHSecretName is the name of the job's key Secret.
func SSHSecretName(job *kubeflow.MPIJob) string { return job.Name + "-ssh" }

// ConfigMapName is the name of the job's hostfile ConfigMap.
func ConfigMapName(job *kubeflow.MPIJob) string { return job.Name + "-config" }

// ServiceName is the name of the job's headless Service.
func ServiceName(job *kubeflow.MPIJob) string { return job.Name }

// LauncherName is the name of the launcher Job and of its Pod's hostname.
func LauncherName(job *kubeflow.MPIJob) string { return job.Name + "-launcher" }

// WorkerName is the name (and hostname) of worker i.
func WorkerName(job *kubeflow.MPIJob, i int) string {
	return job.Name + "-worker-" + strconv.Itoa(i)
}

// FQDN is the fully qualified DNS name of a Pod with the given hostname
// under the job's headless Service.
func FQDN(job *kubeflow.MPIJob, hostname string, opts Options) string {
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
	l := JobLabels(job)
	l[kubeflow.LabelJobRole] = role
	l[kubeflow.LabelReplicaType] = role
	return l
}

// WorkerSelector selects the job's worker Pods; it is the selector of the
// scale subresource.
func WorkerSelector(job *kubeflow.MPIJob) labels.Selector {
	return labels.SelectorFromSet(RoleLabels(job, RoleWorker))
}

func workerLabels(job *kubeflow.MPIJob, i int) map[string]string {
	l := RoleLabels(job, RoleWorker)
	l[kubeflow.LabelReplicaIndex] = strconv.Itoa(i)
	return l
}
