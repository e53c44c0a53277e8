package builder

import (
	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// WorkerPod is worker i: a plain Pod from the Worker template, reachable as
// <job>-worker-<i>.<job>, with the job's keys mounted, the job's key as
// sshd's host key, and, when the template gives no command, running sshd in
// the foreground.
func WorkerPod(job *kubeflow.MPIJob, i int, opts Options) *corev1.Pod {
	name := WorkerName(job, i)
	t := podTemplate(job, kubeflow.MPIReplicaTypeWorker, workerLabels(job, i))
	meta := objectMeta(job, name, t.Labels)
	meta.Annotations = t.Annotations
	pod := &corev1.Pod{ObjectMeta: meta, Spec: t.Spec}
	spec := &pod.Spec

	placeUnderService(job, spec, name, opts)
	spec.RestartPolicy = podRestartPolicy(job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].RestartPolicy)
	noTokenByDefault(spec)
	addSSHAuth(job, spec)
	if len(spec.Containers) > 0 && len(spec.Containers[0].Command) == 0 && len(spec.Containers[0].Args) == 0 {
		spec.Containers[0].Command = []string{defaultSSHDCommand, "-De"}
	}
	addHostKeys(job, spec)
	addSSHClientConfig(job, spec)
	addEnv(spec, []corev1.EnvVar{{Name: EnvJobRole, Value: RoleWorker}})
	return pod
}

// podRestartPolicy maps a replica's restart policy to the Pod's. ExitCode
// is decided by the operator from the exit code, so kubelet never restarts.
func podRestartPolicy(p kubeflow.RestartPolicy) corev1.RestartPolicy {
	switch p {
	case kubeflow.RestartPolicyAlways:
		return corev1.RestartPolicyAlways
	case kubeflow.RestartPolicyOnFailure:
		return corev1.RestartPolicyOnFailure
	default:
		return corev1.RestartPolicyNever
	}
}
