// Package testjob builds MPIJobs for tests with a small fluent wrapper:
// MakeMPIJob("pi", ns).Workers(2).Obj().
package testjob

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Wrapper wraps an MPIJob under construction.
type Wrapper struct{ kubeflow.MPIJob }

// MakeMPIJob returns a job with a launcher running mpirun and one worker,
// both with the image "mpi".
func MakeMPIJob(name, ns string) *Wrapper {
	return &Wrapper{kubeflow.MPIJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubeflow.GroupVersion.String(), Kind: kubeflow.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: kubeflow.MPIJobSpec{
			MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
				kubeflow.MPIReplicaTypeLauncher: {
					Replicas: ptr.To[int32](1),
					Template: podTemplate("launcher", "mpirun", "-n", "1", "hostname"),
				},
				kubeflow.MPIReplicaTypeWorker: {
					Replicas: ptr.To[int32](1),
					Template: podTemplate("worker"),
				},
			},
		},
	}}
}

func podTemplate(name string, command ...string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: name, Image: "mpi", Command: command}},
	}}
}

// Obj returns the built job.
func (w *Wrapper) Obj() *kubeflow.MPIJob { return &w.MPIJob }

// Workers sets the number of workers.
func (w *Wrapper) Workers(n int32) *Wrapper {
	w.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Replicas = ptr.To(n)
	return w
}

// Slots sets slotsPerWorker.
func (w *Wrapper) Slots(n int32) *Wrapper {
	w.Spec.SlotsPerWorker = ptr.To(n)
	return w
}

// Implementation sets the MPI implementation.
func (w *Wrapper) Implementation(i kubeflow.MPIImplementation) *Wrapper {
	w.Spec.MPIImplementation = i
	return w
}

// LauncherAsWorker sets runLauncherAsWorker.
func (w *Wrapper) LauncherAsWorker() *Wrapper {
	w.Spec.RunLauncherAsWorker = ptr.To(true)
	return w
}

// HostNetwork puts every Pod of the job on its node's network.
func (w *Wrapper) HostNetwork() *Wrapper {
	for _, r := range w.Spec.MPIReplicaSpecs {
		r.Template.Spec.HostNetwork = true
	}
	return w
}

// WaitForWorkers sets launcherCreationPolicy: WaitForWorkersReady.
func (w *Wrapper) WaitForWorkers() *Wrapper {
	w.Spec.LauncherCreationPolicy = kubeflow.LauncherCreationPolicyWaitForWorkersReady
	return w
}

// Suspend sets runPolicy.suspend.
func (w *Wrapper) Suspend(s bool) *Wrapper {
	w.Spec.RunPolicy.Suspend = ptr.To(s)
	return w
}

// CleanPodPolicy sets runPolicy.cleanPodPolicy.
func (w *Wrapper) CleanPodPolicy(p kubeflow.CleanPodPolicy) *Wrapper {
	w.Spec.RunPolicy.CleanPodPolicy = ptr.To(p)
	return w
}

// TTL sets runPolicy.ttlSecondsAfterFinished.
func (w *Wrapper) TTL(s int32) *Wrapper {
	w.Spec.RunPolicy.TTLSecondsAfterFinished = ptr.To(s)
	return w
}

// ActiveDeadline sets runPolicy.activeDeadlineSeconds.
func (w *Wrapper) ActiveDeadline(s int64) *Wrapper {
	w.Spec.RunPolicy.ActiveDeadlineSeconds = ptr.To(s)
	return w
}

// BackoffLimit sets runPolicy.backoffLimit.
func (w *Wrapper) BackoffLimit(n int32) *Wrapper {
	w.Spec.RunPolicy.BackoffLimit = ptr.To(n)
	return w
}

// ManagedBy sets runPolicy.managedBy.
func (w *Wrapper) ManagedBy(m string) *Wrapper {
	w.Spec.RunPolicy.ManagedBy = ptr.To(m)
	return w
}

// SSHAuthMountPath sets sshAuthMountPath.
func (w *Wrapper) SSHAuthMountPath(p string) *Wrapper {
	w.Spec.SSHAuthMountPath = p
	return w
}

// WorkerRestartPolicy sets the workers' restartPolicy.
func (w *Wrapper) WorkerRestartPolicy(p kubeflow.RestartPolicy) *Wrapper {
	w.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].RestartPolicy = p
	return w
}

// LauncherRestartPolicy sets the launcher's restartPolicy.
func (w *Wrapper) LauncherRestartPolicy(p kubeflow.RestartPolicy) *Wrapper {
	w.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].RestartPolicy = p
	return w
}

// Defaulted returns a defaulted copy, as the controller sees the job.
func (w *Wrapper) Defaulted() *kubeflow.MPIJob {
	j := w.DeepCopy()
	kubeflow.SetDefaults(j)
	return j
}

// SchedulingPolicy sets runPolicy.schedulingPolicy.
func (w *Wrapper) SchedulingPolicy(p kubeflow.SchedulingPolicy) *Wrapper {
	w.Spec.RunPolicy.SchedulingPolicy = &p
	return w
}

// Requests sets the requests of the first container of a role.
func (w *Wrapper) Requests(rt kubeflow.MPIReplicaType, r corev1.ResourceList) *Wrapper {
	w.Spec.MPIReplicaSpecs[rt].Template.Spec.Containers[0].Resources.Requests = r
	return w
}

// PriorityClass sets the priorityClassName of a role's template.
func (w *Wrapper) PriorityClass(rt kubeflow.MPIReplicaType, name string) *Wrapper {
	w.Spec.MPIReplicaSpecs[rt].Template.Spec.PriorityClassName = name
	return w
}

// Annotation sets an annotation of the MPIJob.
func (w *Wrapper) Annotation(k, v string) *Wrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[k] = v
	return w
}
