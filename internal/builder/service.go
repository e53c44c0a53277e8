package builder

import (
	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Service is the job's headless Service. It selects the launcher and the
// workers, so each has a DNS name, and publishes not-ready addresses so a
// worker resolves as soon as its Pod has an IP, before any readiness probe
// passes: mpirun connects to sshd, not to a ready endpoint.
func Service(job *kubeflow.MPIJob) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(job, ServiceName(job), JobLabels(job)),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 JobLabels(job),
			PublishNotReadyAddresses: true,
		},
	}
}
