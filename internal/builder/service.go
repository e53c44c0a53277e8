package builder

import (
	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Service is the job's headless Service: the domain of the launcher's and
// the workers' DNS names. It selects no Pod: the operator publishes them
// in EndpointSlices (endpoints.go), a worker as soon as it runs (Published),
// before any readiness probe passes, as a Service publishing not-ready
// addresses would: mpirun connects to sshd, not to a ready endpoint.
func Service(job *kubeflow.MPIJob) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(job, ServiceName(job), JobLabels(job)),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
		},
	}
}
