package gang

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// WorkloadTemplateName names the one PodGroupTemplate of a job's
// Workload: an MPI job is a single gang.
const WorkloadTemplateName = "mpi"

// native groups a job's Pods with Kubernetes' own Workload API
// (scheduling.k8s.io/v1alpha3, feature gate GenericWorkload, and
// GangScheduling in kube-scheduler): a Workload that describes the job's
// gang, and the PodGroup, its runtime instance, that the Pods name in
// spec.schedulingGroup. The default scheduler schedules them.
type native struct{}

func (native) Name() string { return Kubernetes }

func (native) Kinds() []client.Object {
	return []client.Object{&schedulingv1alpha3.Workload{}, &schedulingv1alpha3.PodGroup{}}
}

func (native) AddToScheme(s *runtime.Scheme) error { return schedulingv1alpha3.AddToScheme(s) }

// Groups builds the Workload and its PodGroup. The gang policy is minCount
// = MinMember; queue, minResources and scheduleTimeoutSeconds have no
// field here (kube-scheduler computes resources from the Pods and keeps
// its own timeout).
func (native) Groups(job *kubeflow.MPIJob, _ Priorities) []client.Object {
	policy := schedulingv1alpha3.PodGroupSchedulingPolicy{
		Gang: &schedulingv1alpha3.GangSchedulingPolicy{MinCount: MinMember(job)},
	}
	pc := priorityClassName(job)
	workload := &schedulingv1alpha3.Workload{
		ObjectMeta: objectMeta(job),
		Spec: schedulingv1alpha3.WorkloadSpec{
			ControllerRef: &schedulingv1alpha3.TypedLocalObjectReference{
				APIGroup: kubeflow.GroupVersion.Group, Kind: kubeflow.Kind, Name: job.Name,
			},
			PodGroupTemplates: []schedulingv1alpha3.PodGroupTemplate{{
				Name:              WorkloadTemplateName,
				SchedulingPolicy:  policy,
				PriorityClassName: pc,
			}},
		},
	}
	podGroup := &schedulingv1alpha3.PodGroup{
		ObjectMeta: objectMeta(job),
		Spec: schedulingv1alpha3.PodGroupSpec{
			WorkloadRef: &schedulingv1alpha3.WorkloadReference{
				WorkloadName: workload.Name, TemplateName: WorkloadTemplateName,
			},
			SchedulingPolicy:  *policy.DeepCopy(),
			PriorityClassName: pc,
		},
	}
	return []client.Object{workload, podGroup}
}

// Decorate names the job's PodGroup in the Pod. The Pod keeps its
// scheduler: the default one implements the Workload API.
func (native) Decorate(tmpl *corev1.PodTemplateSpec, job *kubeflow.MPIJob) {
	tmpl.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(GroupName(job))}
}

// Merge updates only labels. The specs are immutable, and a PodGroup
// cannot be made anew while the job runs: the PodGroupProtection finalizer
// keeps it until no Pod names it. So a running gang keeps the size it
// was made with (workers added by a scale join the gang that was already
// scheduled); a suspend and resume makes both objects anew.
func (native) Merge(existing, desired client.Object) bool {
	if hasLabels(existing, desired.GetLabels()) {
		return false
	}
	mergeLabels(existing, desired.GetLabels())
	return true
}
