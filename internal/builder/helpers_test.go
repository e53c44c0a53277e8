package builder

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// The values below are spelled out rather than taken from the package's
// constants: they are the contract with images, users and Kueue, so a
// change to a constant must break a test.
const (
	testUID     = types.UID("0c6e3f2a-uid")
	testDomain  = "cluster.test"
	testSSHArgs = "-F /etc/mpi/ssh_config"

	labelJobName      = "training.kubeflow.org/job-name"
	labelOperatorName = "training.kubeflow.org/operator-name"
	labelJobRole      = "training.kubeflow.org/job-role"
	labelReplicaType  = "training.kubeflow.org/replica-type"
	labelReplicaIndex = "training.kubeflow.org/replica-index"
)

var testOpts = Options{ClusterDomain: testDomain}

// defaulted returns the wrapper's defaulted job with a UID, as the
// controller sees a job read from the API server.
func defaulted(w *testjob.Wrapper) *kubeflow.MPIJob {
	j := w.Defaulted()
	j.UID = testUID
	return j
}

// ownerRefs is the controller reference every child must carry.
func ownerRefs(job *kubeflow.MPIJob) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion:         "kubeflow.org/v2beta1",
		Kind:               "MPIJob",
		Name:               job.Name,
		UID:                job.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}}
}

func jobLabels(name string) map[string]string {
	return map[string]string{
		labelJobName:      name,
		labelOperatorName: "mpi-operator",
	}
}

func roleLabels(name, role string) map[string]string {
	l := jobLabels(name)
	l[labelJobRole] = role
	l[labelReplicaType] = role
	return l
}

func workerTemplate(job *kubeflow.MPIJob) *corev1.PodTemplateSpec {
	return &job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template
}

func launcherTemplate(job *kubeflow.MPIJob) *corev1.PodTemplateSpec {
	return &job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template
}

// sshVolume is the expected key volume for a job named name.
func sshVolume(name string, mode int32) corev1.Volume {
	return corev1.Volume{
		Name: "ssh-auth",
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  name + "-ssh",
			DefaultMode: ptr.To(mode),
			Items: []corev1.KeyToPath{
				{Key: "ssh-privatekey", Path: "id_rsa"},
				{Key: "ssh-publickey", Path: "id_rsa.pub"},
				{Key: "ssh-publickey", Path: "authorized_keys"},
			},
		}},
	}
}

func sshMount(path string) corev1.VolumeMount {
	return corev1.VolumeMount{Name: "ssh-auth", MountPath: path, ReadOnly: true}
}

// configVolume is the expected hostfile volume of the launcher.
func configVolume(name string) corev1.Volume {
	return corev1.Volume{
		Name: "mpi-job-config",
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name + "-config"},
			Items: []corev1.KeyToPath{
				{Key: "hostfile", Path: "hostfile", Mode: ptr.To[int32](0o444)},
				{Key: "discover_hosts.sh", Path: "discover_hosts.sh", Mode: ptr.To[int32](0o555)},
				{Key: "known_hosts", Path: "known_hosts", Mode: ptr.To[int32](0o444)},
				{Key: "ssh_config", Path: "ssh_config", Mode: ptr.To[int32](0o444)},
			},
		}},
	}
}

var configMount = corev1.VolumeMount{Name: "mpi-job-config", MountPath: "/etc/mpi", ReadOnly: true}

// publishedVolume is the expected volume that shows the launcher's wait
// the operator's word that every worker's name is published.
var publishedVolume = corev1.Volume{
	Name: "mpi-job-published",
	VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
		Items: []corev1.DownwardAPIVolumeFile{{
			Path:     "workers-published",
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['mpi-operator.kubeflow.org/workers-published']"},
			Mode:     ptr.To[int32](0o444),
		}},
	}},
}

var publishedMount = corev1.VolumeMount{Name: "mpi-job-published", MountPath: "/etc/mpi-operator", ReadOnly: true}

// knownHostsVolume is the expected known_hosts and ssh_config volume of a
// worker.
func knownHostsVolume(name string) corev1.Volume {
	return corev1.Volume{
		Name: "mpi-job-config",
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name + "-config"},
			Items: []corev1.KeyToPath{
				{Key: "known_hosts", Path: "known_hosts", Mode: ptr.To[int32](0o444)},
				{Key: "ssh_config", Path: "ssh_config", Mode: ptr.To[int32](0o444)},
			},
		}},
	}
}

// sshdWorkerMounts are the mounts a worker's first container gets when
// it runs sshd itself (the job's key is given to sshd with -h): the keys
// at path, known_hosts.
func sshdWorkerMounts(path string) []corev1.VolumeMount {
	return []corev1.VolumeMount{sshMount(path), configMount}
}

// workerMounts are the mounts a worker's first container gets when it
// runs a command other than sshd: the keys at path, the job's key at
// sshd's default ed25519 host key file, known_hosts.
func workerMounts(path string) []corev1.VolumeMount {
	return []corev1.VolumeMount{
		sshMount(path),
		{Name: "ssh-auth", MountPath: "/etc/ssh/ssh_host_ed25519_key", SubPath: "id_rsa", ReadOnly: true},
		{Name: "ssh-auth", MountPath: "/etc/ssh/ssh_host_ed25519_key.pub", SubPath: "id_rsa.pub", ReadOnly: true},
		configMount,
	}
}

// findVolume returns the named volume of spec, or nil.
func findVolume(spec *corev1.PodSpec, name string) *corev1.Volume {
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	return nil
}
