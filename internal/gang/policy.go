package gang

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// objectMeta is the metadata of a group object: the job's name and
// namespace, our labels and a controller reference to the job.
func objectMeta(job *kubeflow.MPIJob) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            GroupName(job),
		Namespace:       job.Namespace,
		Labels:          groupLabels(job),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, kubeflow.GroupVersion.WithKind(kubeflow.Kind))},
	}
}

// MinMember is how many of the job's Pods must be schedulable together:
// schedulingPolicy.minAvailable, else every worker and the launcher, as
// upstream. With launcherCreationPolicy WaitForWorkersReady the launcher
// Pod does not exist until the workers are Ready, and they never get
// Ready while the scheduler waits for a gang that counts the launcher
// (kubeflow/mpi-operator#608): there the gang is the workers, and a
// larger minAvailable is lowered to their number.
func MinMember(job *kubeflow.MPIJob) int32 {
	n := job.Workers() + 1
	if p := job.Spec.RunPolicy.SchedulingPolicy; p != nil && p.MinAvailable != nil {
		n = *p.MinAvailable
	}
	if launcherOutsideGang(job) {
		n = min(n, job.Workers())
	}
	return n
}

// launcherOutsideGang reports whether the launcher cannot be part of the
// gang because it is only created once the workers are Ready. With no
// workers there is nothing to wait for and the launcher is made at once.
func launcherOutsideGang(job *kubeflow.MPIJob) bool {
	return job.Spec.LauncherCreationPolicy == kubeflow.LauncherCreationPolicyWaitForWorkersReady && job.Workers() > 0
}

// priorityClassName is the group's priority class: schedulingPolicy's,
// else the launcher template's, else the workers', as upstream.
func priorityClassName(job *kubeflow.MPIJob) string {
	if p := job.Spec.RunPolicy.SchedulingPolicy; p != nil && p.PriorityClass != "" {
		return p.PriorityClass
	}
	for _, rt := range []kubeflow.MPIReplicaType{kubeflow.MPIReplicaTypeLauncher, kubeflow.MPIReplicaTypeWorker} {
		if r := job.Spec.MPIReplicaSpecs[rt]; r != nil && r.Template.Spec.PriorityClassName != "" {
			return r.Template.Spec.PriorityClassName
		}
	}
	return ""
}

// minResources is what the first minMember Pods request together, for
// the scheduler to turn a gang away early when the cluster cannot hold it:
// schedulingPolicy.minResources when given; none for an empty gang.
// Otherwise it follows upstream's arithmetic, so a job keeps the PodGroup it
// had: the role whose template has the lower PriorityClass value (the
// workers on a tie) is cut to minMember-1 Pods when the job has more Pods
// than minMember. Upstream cuts the launcher that way too when the workers
// rank higher; that is kept, as schedulers read only the sum. When the
// launcher is outside the gang (see MinMember), the sum is that of the
// gang's workers alone.
func minResources(job *kubeflow.MPIJob, minMember int32, priorities Priorities) *corev1.ResourceList {
	if p := job.Spec.RunPolicy.SchedulingPolicy; p != nil && p.MinResources != nil {
		return p.MinResources
	}
	if minMember == 0 {
		return nil
	}
	sum := corev1.ResourceList{}
	if launcherOutsideGang(job) {
		addPodResources(sum, job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template.Spec, int64(minMember))
		return &sum
	}
	type role struct {
		typ      kubeflow.MPIReplicaType
		priority int32
		replicas int32
		spec     *corev1.PodSpec
	}
	var roles []role
	total := int32(0)
	for _, rt := range []kubeflow.MPIReplicaType{kubeflow.MPIReplicaTypeLauncher, kubeflow.MPIReplicaTypeWorker} {
		r := job.Spec.MPIReplicaSpecs[rt]
		if r == nil {
			continue
		}
		ro := role{typ: rt, replicas: ptr.Deref(r.Replicas, 0), spec: &r.Template.Spec}
		if name := r.Template.Spec.PriorityClassName; name != "" && priorities != nil {
			ro.priority, _ = priorities(name)
		}
		total += ro.replicas
		roles = append(roles, ro)
	}
	if total > minMember && len(roles) == 2 {
		// Higher priority first; a stable sort keeps the launcher first
		// on a tie, so the workers are the ones cut.
		slices.SortStableFunc(roles, func(a, b role) int { return cmp.Compare(b.priority, a.priority) })
		roles[1].replicas = minMember - 1
	}
	for _, ro := range roles {
		addPodResources(sum, *ro.spec, int64(ro.replicas))
	}
	return &sum
}

// addPodResources adds n times the containers' requests (a limit standing
// in for a missing request) to sum. Init containers are not counted, as
// upstream does not count them.
func addPodResources(sum corev1.ResourceList, spec corev1.PodSpec, n int64) {
	for _, c := range spec.Containers {
		per := corev1.ResourceList{}
		for name, q := range c.Resources.Requests {
			per[name] = q
		}
		for name, q := range c.Resources.Limits {
			if _, ok := per[name]; !ok {
				per[name] = q
			}
		}
		for name, q := range per {
			q = q.DeepCopy()
			q.Mul(n)
			if have, ok := sum[name]; ok {
				have.Add(q)
				sum[name] = have
			} else {
				sum[name] = q
			}
		}
	}
}
