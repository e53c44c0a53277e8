package gang

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	"k8s.io/apimachinery/pkg/api/equality"
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

// Merge compares the fields Groups sets (the API server fills in others,
// such as priority). Their specs are immutable: a change, a scale of the
// job for one, needs the object made anew. The Pods keep naming the
// PodGroup by name, so they follow the new one.
func (native) Merge(existing, desired client.Object) Change {
	same := false
	switch have := existing.(type) {
	case *schedulingv1alpha3.Workload:
		want := desired.(*schedulingv1alpha3.Workload)
		same = equality.Semantic.DeepEqual(have.Spec.ControllerRef, want.Spec.ControllerRef) &&
			len(have.Spec.PodGroupTemplates) == 1 &&
			samePodGroupTemplate(have.Spec.PodGroupTemplates[0], want.Spec.PodGroupTemplates[0])
	case *schedulingv1alpha3.PodGroup:
		want := desired.(*schedulingv1alpha3.PodGroup)
		same = equality.Semantic.DeepEqual(have.Spec.WorkloadRef, want.Spec.WorkloadRef) &&
			equality.Semantic.DeepEqual(have.Spec.SchedulingPolicy, want.Spec.SchedulingPolicy) &&
			have.Spec.PriorityClassName == want.Spec.PriorityClassName
	}
	switch {
	case !same:
		return Recreate
	case !hasLabels(existing, desired.GetLabels()):
		mergeLabels(existing, desired.GetLabels())
		return Update
	}
	return Unchanged
}

func samePodGroupTemplate(have, want schedulingv1alpha3.PodGroupTemplate) bool {
	return have.Name == want.Name && have.PriorityClassName == want.PriorityClassName &&
		equality.Semantic.DeepEqual(have.SchedulingPolicy, want.SchedulingPolicy)
}
