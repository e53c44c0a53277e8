package gang

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Values of --gang-scheduling with a meaning of their own. Any other
// non-empty value is, as upstream, the name of a scheduler-plugins
// scheduler.
const (
	Off              = ""
	Volcano          = "volcano"
	SchedulerPlugins = "scheduler-plugins"
	Kubernetes       = "kubernetes"
)

// FlagUsage documents --gang-scheduling.
const FlagUsage = `Gang scheduling: "" (off), "volcano" (Volcano PodGroups), "kubernetes" ` +
	`(Kubernetes' Workload API, scheduling.k8s.io/v1alpha3, behind feature gates), or the name ` +
	`of a scheduler-plugins scheduler ("scheduler-plugins" or any other name; scheduler-plugins ` +
	`PodGroups, Pods get that schedulerName), as the Kubeflow MPI Operator does.`

// Priorities returns the value of the PriorityClass of that name, and
// false if there is none. It is the only cluster state the builders read.
type Priorities func(name string) (int32, bool)

// Scheduler is one way of gang scheduling an MPIJob.
type Scheduler interface {
	// Name is the --gang-scheduling value it was made from.
	Name() string
	// Kinds returns an empty object of each kind Groups makes, in the order
	// they are created.
	Kinds() []client.Object
	// AddToScheme registers those kinds.
	AddToScheme(*runtime.Scheme) error
	// Groups builds the job's group objects, in creation order, from the
	// defaulted job.
	Groups(job *kubeflow.MPIJob, priorities Priorities) []client.Object
	// Decorate makes a Pod template of the job (a worker's or the
	// launcher's) a member of the job's group.
	Decorate(tmpl *corev1.PodTemplateSpec, job *kubeflow.MPIJob)
	// Merge brings existing to desired (same kind and name) in memory, as
	// far as the API lets it change, and reports whether it changed it.
	Merge(existing, desired client.Object) bool
}

// New returns the Scheduler that --gang-scheduling=name asks for, nil when
// name is empty. Its kinds are registered in scheme, when one is given.
func New(name string, scheme *runtime.Scheme) (Scheduler, error) {
	var s Scheduler
	switch name {
	case Off:
		return nil, nil
	case Volcano:
		s = volcano{}
	case Kubernetes:
		s = native{}
	default:
		s = schedulerPlugins{schedulerName: name}
	}
	if scheme != nil {
		if err := s.AddToScheme(scheme); err != nil {
			return nil, fmt.Errorf("registering the %s group kinds: %w", name, err)
		}
	}
	return s, nil
}

// Kinds returns the kinds of s, none when s is nil (gang scheduling off).
func Kinds(s Scheduler) []client.Object {
	if s == nil {
		return nil
	}
	return s.Kinds()
}

// GroupName is the name of the job's group objects: the job's own, as
// upstream names its PodGroups.
func GroupName(job *kubeflow.MPIJob) string { return job.Name }

// groupLabels mark a group object as this operator's, so the controller's
// cache can hold only ours: a Volcano cluster has a PodGroup for every
// Volcano job and bare Pod. Upstream sets no labels; nothing schedules by
// these.
func groupLabels(job *kubeflow.MPIJob) map[string]string {
	return map[string]string{
		kubeflow.LabelOperatorName: kubeflow.OperatorName,
		kubeflow.LabelJobName:      job.Name,
	}
}
