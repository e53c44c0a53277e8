package testjob

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Bases are the jobs the fuzz targets start from before Edit changes
// them: the shapes upstream's examples take (Open MPI as root and as a
// non-root user, Intel MPI waiting for its workers, MPICH with the launcher
// running ranks), so that a seed with no edit at all is a realistic job.
// The fuzz targets add manifests read from files to these.
func Bases() []*kubeflow.MPIJob {
	nonRoot := MakeMPIJob("pi", "").Workers(2).SSHAuthMountPath("/home/mpiuser/.ssh").CleanPodPolicy(kubeflow.CleanPodPolicyRunning).Obj()
	for _, rs := range nonRoot.Spec.MPIReplicaSpecs {
		rs.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}
	}
	nonRoot.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template.Spec.Containers[0].Command =
		[]string{"/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"}
	return []*kubeflow.MPIJob{
		MakeMPIJob("pi", "").Obj(),
		nonRoot,
		MakeMPIJob("pi-intel", "").Workers(3).Slots(2).Implementation(kubeflow.MPIImplementationIntel).WaitForWorkers().Obj(),
		MakeMPIJob("pi-mpich", "").Workers(2).Implementation(kubeflow.MPIImplementationMPICH).LauncherAsWorker().
			LauncherRestartPolicy(kubeflow.RestartPolicyExitCode).BackoffLimit(2).Obj(),
	}
}
