package v2beta1

import "k8s.io/utils/ptr"

// SetDefaults fills in the defaults of the API in place. The CRD applies the
// same defaults at admission for the fields it can; the map-keyed replica
// specs get role-specific defaults that a schema cannot express, so the
// controller always works on a defaulted copy.
func SetDefaults(job *MPIJob) {
	spec := &job.Spec
	if spec.SlotsPerWorker == nil {
		spec.SlotsPerWorker = ptr.To[int32](DefaultSlotsPerWorker)
	}
	if spec.RunLauncherAsWorker == nil {
		spec.RunLauncherAsWorker = ptr.To(false)
	}
	if spec.SSHAuthMountPath == "" {
		spec.SSHAuthMountPath = DefaultSSHAuthMountPath
	}
	if spec.LauncherCreationPolicy == "" {
		spec.LauncherCreationPolicy = LauncherCreationPolicyAtStartup
	}
	if spec.MPIImplementation == "" {
		spec.MPIImplementation = MPIImplementationOpenMPI
	}
	if spec.RunPolicy.CleanPodPolicy == nil {
		spec.RunPolicy.CleanPodPolicy = ptr.To(CleanPodPolicyNone)
	}
	if spec.RunPolicy.Suspend == nil {
		spec.RunPolicy.Suspend = ptr.To(false)
	}
	if l := spec.MPIReplicaSpecs[MPIReplicaTypeLauncher]; l != nil {
		if l.Replicas == nil {
			l.Replicas = ptr.To[int32](1)
		}
		if l.RestartPolicy == "" {
			l.RestartPolicy = RestartPolicyOnFailure
		}
	}
	if w := spec.MPIReplicaSpecs[MPIReplicaTypeWorker]; w != nil {
		if w.Replicas == nil {
			w.Replicas = ptr.To[int32](0)
		}
		if w.RestartPolicy == "" {
			w.RestartPolicy = RestartPolicyNever
		}
	}
}

// Workers returns the number of worker replicas of a defaulted job.
func (j *MPIJob) Workers() int32 {
	if w := j.Spec.MPIReplicaSpecs[MPIReplicaTypeWorker]; w != nil && w.Replicas != nil {
		return *w.Replicas
	}
	return 0
}

// IsSuspended reports whether spec.runPolicy.suspend is true.
func (j *MPIJob) IsSuspended() bool {
	return ptr.Deref(j.Spec.RunPolicy.Suspend, false)
}

// IsManagedByUs reports whether this operator should reconcile the job:
// managedBy is unset, empty or names this operator.
func (j *MPIJob) IsManagedByUs() bool {
	m := ptr.Deref(j.Spec.RunPolicy.ManagedBy, "")
	return m == "" || m == KubeflowJobController
}
