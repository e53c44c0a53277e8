package v2beta1

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate re-checks, on a defaulted job, the rules the CRD enforces at
// admission. The controller calls it because a job can reach it without
// those rules: an older CRD, a CRD installed without validation, or a
// direct write to etcd. Errors name the field, as admission's do.
func Validate(job *MPIJob) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	name := field.NewPath("metadata", "name")

	for _, msg := range validation.IsDNS1035Label(job.Name) {
		errs = append(errs, field.Invalid(name, job.Name, msg))
	}
	if len(job.Name) > 54 {
		errs = append(errs, field.TooLong(name, job.Name, 54))
	}
	if n := job.Workers(); n > 1 && len(job.Name)+len("-worker-")+len(fmt.Sprint(n-1)) > 63 {
		errs = append(errs, field.Invalid(name, job.Name,
			fmt.Sprintf("too long for %d workers: the last worker's name must fit in 63 characters", n)))
	}
	if s := job.Spec.SlotsPerWorker; s != nil && *s < 1 {
		errs = append(errs, field.Invalid(spec.Child("slotsPerWorker"), *s, "must be at least 1"))
	}
	if p := job.Spec.SSHAuthMountPath; !strings.HasPrefix(p, "/") || p == "/" {
		errs = append(errs, field.Invalid(spec.Child("sshAuthMountPath"), p, "must be an absolute path other than /"))
	}
	switch job.Spec.MPIImplementation {
	case MPIImplementationOpenMPI, MPIImplementationIntel, MPIImplementationMPICH:
	default:
		errs = append(errs, field.NotSupported(spec.Child("mpiImplementation"), job.Spec.MPIImplementation,
			[]MPIImplementation{MPIImplementationOpenMPI, MPIImplementationIntel, MPIImplementationMPICH}))
	}
	switch job.Spec.LauncherCreationPolicy {
	case LauncherCreationPolicyAtStartup, LauncherCreationPolicyWaitForWorkersReady:
	default:
		errs = append(errs, field.NotSupported(spec.Child("launcherCreationPolicy"), job.Spec.LauncherCreationPolicy,
			[]LauncherCreationPolicy{LauncherCreationPolicyAtStartup, LauncherCreationPolicyWaitForWorkersReady}))
	}
	errs = append(errs, validateRunPolicy(&job.Spec.RunPolicy, spec.Child("runPolicy"))...)
	errs = append(errs, validateReplicaSpecs(job.Spec.MPIReplicaSpecs, spec.Child("mpiReplicaSpecs"))...)
	return errs
}

func validateRunPolicy(rp *RunPolicy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p := rp.CleanPodPolicy; p != nil {
		switch *p {
		case CleanPodPolicyNone, CleanPodPolicyRunning, CleanPodPolicyAll:
		default:
			errs = append(errs, field.NotSupported(path.Child("cleanPodPolicy"), *p,
				[]CleanPodPolicy{CleanPodPolicyNone, CleanPodPolicyRunning, CleanPodPolicyAll}))
		}
	}
	if v := rp.TTLSecondsAfterFinished; v != nil && *v < 0 {
		errs = append(errs, field.Invalid(path.Child("ttlSecondsAfterFinished"), *v, "must be at least 0"))
	}
	if v := rp.ActiveDeadlineSeconds; v != nil && *v < 1 {
		errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), *v, "must be at least 1"))
	}
	if v := rp.BackoffLimit; v != nil && *v < 0 {
		errs = append(errs, field.Invalid(path.Child("backoffLimit"), *v, "must be at least 0"))
	}
	if m := rp.ManagedBy; m != nil && *m != "" && *m != KubeflowJobController && *m != MultiKueueController {
		errs = append(errs, field.NotSupported(path.Child("managedBy"), *m,
			[]string{KubeflowJobController, MultiKueueController}))
	}
	return errs
}

func validateReplicaSpecs(specs map[MPIReplicaType]*ReplicaSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for role, rs := range specs {
		p := path.Key(string(role))
		if role != MPIReplicaTypeLauncher && role != MPIReplicaTypeWorker {
			errs = append(errs, field.NotSupported(path, role, []MPIReplicaType{MPIReplicaTypeLauncher, MPIReplicaTypeWorker}))
			continue
		}
		if rs == nil {
			errs = append(errs, field.Required(p, ""))
			continue
		}
		if rs.Replicas != nil && *rs.Replicas < 0 {
			errs = append(errs, field.Invalid(p.Child("replicas"), *rs.Replicas, "must be at least 0"))
		}
		switch rs.RestartPolicy {
		case RestartPolicyOnFailure, RestartPolicyNever, RestartPolicyExitCode, "":
		case RestartPolicyAlways:
			if role == MPIReplicaTypeLauncher {
				errs = append(errs, field.Invalid(p.Child("restartPolicy"), rs.RestartPolicy, "the launcher runs to completion: use OnFailure, Never or ExitCode"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("restartPolicy"), rs.RestartPolicy,
				[]RestartPolicy{RestartPolicyAlways, RestartPolicyOnFailure, RestartPolicyNever, RestartPolicyExitCode}))
		}
		if len(rs.Template.Spec.Containers) == 0 {
			errs = append(errs, field.Required(p.Child("template", "spec", "containers"), "at least one container"))
		}
	}
	l := specs[MPIReplicaTypeLauncher]
	switch {
	case l == nil:
		errs = append(errs, field.Required(path.Key(string(MPIReplicaTypeLauncher)), "an MPIJob needs a launcher"))
	case l.Replicas != nil && *l.Replicas != 1:
		errs = append(errs, field.Invalid(path.Key(string(MPIReplicaTypeLauncher)).Child("replicas"), *l.Replicas, "must be 1"))
	}
	return errs
}
