package builder

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// SSHSecret is the job's key Secret holding the given key pair (OpenSSH
// private key, authorized_keys line). It is immutable: a job keeps one key
// for its whole life, and kubelet need not watch it.
func SSHSecret(job *kubeflow.MPIJob, privateKey, publicKey []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta(job, SSHSecretName(job), JobLabels(job)),
		Type:       corev1.SecretTypeSSHAuth,
		Immutable:  ptr.To(true),
		Data: map[string][]byte{
			corev1.SSHAuthPrivateKey: privateKey,
			SSHPublicKeyKey:          publicKey,
		},
	}
}
