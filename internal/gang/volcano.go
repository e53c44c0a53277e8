package gang

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// volcano groups a job's Pods in a Volcano PodGroup (scheduling.volcano.sh/v1beta1).
type volcano struct{}

func (volcano) Name() string { return Volcano }

func (volcano) Kinds() []client.Object { return []client.Object{&volcanov1beta1.PodGroup{}} }

func (volcano) AddToScheme(s *runtime.Scheme) error { return volcanov1beta1.AddToScheme(s) }

// Groups builds the PodGroup as upstream does; scheduleTimeoutSeconds has
// no Volcano field and is not passed on.
func (volcano) Groups(job *kubeflow.MPIJob, priorities Priorities) []client.Object {
	minMember := MinMember(job)
	queue := job.Annotations[volcanov1beta1.QueueNameAnnotationKey]
	if p := job.Spec.RunPolicy.SchedulingPolicy; p != nil && p.Queue != "" {
		queue = p.Queue
	}
	return []client.Object{&volcanov1beta1.PodGroup{
		ObjectMeta: objectMeta(job),
		Spec: volcanov1beta1.PodGroupSpec{
			MinMember:         minMember,
			Queue:             queue,
			PriorityClassName: priorityClassName(job),
			MinResources:      minResources(job, minMember, priorities),
		},
	}}
}

// Decorate hands the Pod to the Volcano scheduler and names its group by
// annotation. A schedulerName in the template is overridden: the gang
// only forms under one scheduler.
func (volcano) Decorate(tmpl *corev1.PodTemplateSpec, job *kubeflow.MPIJob) {
	tmpl.Spec.SchedulerName = Volcano
	if tmpl.Annotations == nil {
		tmpl.Annotations = map[string]string{}
	}
	tmpl.Annotations[volcanov1beta1.KubeGroupNameAnnotationKey] = GroupName(job)
}

// defaultQueue is the queue Volcano's CRD (and its webhook) gives a
// PodGroup that names none.
const defaultQueue = "default"

// Merge takes the desired spec and labels; Volcano's PodGroup spec can be
// updated. An empty queue is taken as the default one the API server
// filled in, or every reconcile would write it again.
func (volcano) Merge(existing, desired client.Object) bool {
	have, want := existing.(*volcanov1beta1.PodGroup), desired.(*volcanov1beta1.PodGroup)
	spec := want.Spec.DeepCopy()
	if spec.Queue == "" {
		spec.Queue = defaultQueue
	}
	if equality.Semantic.DeepEqual(have.Spec, *spec) && hasLabels(have, want.Labels) {
		return false
	}
	have.Spec = *spec
	mergeLabels(have, want.Labels)
	return true
}

func hasLabels(obj client.Object, labels map[string]string) bool {
	for k, v := range labels {
		if obj.GetLabels()[k] != v {
			return false
		}
	}
	return true
}

func mergeLabels(obj client.Object, labels map[string]string) {
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range labels {
		l[k] = v
	}
	obj.SetLabels(l)
}
