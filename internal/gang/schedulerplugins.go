package gang

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// schedulerPlugins groups a job's Pods in a scheduler-plugins PodGroup
// (scheduling.x-k8s.io/v1alpha1), for its coscheduling plugin.
type schedulerPlugins struct {
	// schedulerName is the --gang-scheduling value: upstream takes it as
	// the name of the scheduler profile that runs coscheduling.
	schedulerName string
}

func (s schedulerPlugins) Name() string { return s.schedulerName }

func (schedulerPlugins) Kinds() []client.Object { return []client.Object{&schedv1alpha1.PodGroup{}} }

func (schedulerPlugins) AddToScheme(s *runtime.Scheme) error { return schedv1alpha1.AddToScheme(s) }

// Groups builds the PodGroup as upstream does: queue and priority class
// have no field there and are not passed on; scheduleTimeoutSeconds
// defaults to 0 (the plugin's own default then applies).
func (schedulerPlugins) Groups(job *kubeflow.MPIJob, priorities Priorities) []client.Object {
	minMember := MinMember(job)
	timeout := ptr.To[int32](0)
	if p := job.Spec.RunPolicy.SchedulingPolicy; p != nil && p.ScheduleTimeoutSeconds != nil {
		timeout = ptr.To(*p.ScheduleTimeoutSeconds)
	}
	var res corev1.ResourceList
	if r := minResources(job, minMember, priorities); r != nil {
		res = *r
	}
	return []client.Object{&schedv1alpha1.PodGroup{
		ObjectMeta: objectMeta(job),
		Spec: schedv1alpha1.PodGroupSpec{
			MinMember:              minMember,
			MinResources:           res,
			ScheduleTimeoutSeconds: timeout,
		},
	}}
}

// Decorate hands the Pod to the scheduler and names its group by label.
func (s schedulerPlugins) Decorate(tmpl *corev1.PodTemplateSpec, job *kubeflow.MPIJob) {
	tmpl.Spec.SchedulerName = s.schedulerName
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels[schedv1alpha1.PodGroupLabel] = GroupName(job)
}

// Merge takes the desired spec and labels; the spec can be updated.
func (schedulerPlugins) Merge(existing, desired client.Object) bool {
	have, want := existing.(*schedv1alpha1.PodGroup), desired.(*schedv1alpha1.PodGroup)
	if equality.Semantic.DeepEqual(have.Spec, want.Spec) && hasLabels(have, want.Labels) {
		return false
	}
	have.Spec = want.Spec
	mergeLabels(have, want.Labels)
	return true
}
