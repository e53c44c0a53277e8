package builder

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// objectMeta is the metadata shared by every child: namespace, labels and a
// controller reference, so garbage collection removes the child with the job.
func objectMeta(job *kubeflow.MPIJob, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       job.Namespace,
		Labels:          labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, kubeflow.GroupVersion.WithKind(kubeflow.Kind))},
	}
}
