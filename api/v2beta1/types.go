package v2beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MPIJob runs an MPI program: N worker Pods running sshd and one launcher
// Job whose Pod runs mpirun against them.
//
// The name rules below exist because every child is named after the job:
// the headless Service is `<name>` and the Pods `<name>-launcher` and
// `<name>-worker-<i>` are DNS labels under it, so each must be a DNS-1035
// label of at most 63 characters.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=mpij
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.mpiReplicaSpecs.Worker.replicas,statuspath=.status.replicaStatuses.Worker.active,selectorpath=.status.replicaStatuses.Worker.selector
// +kubebuilder:printcolumn:name="Workers",type=integer,JSONPath=`.spec.mpiReplicaSpecs.Worker.replicas`
// +kubebuilder:printcolumn:name="Running",type=integer,JSONPath=`.status.replicaStatuses.Worker.active`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter): it names the job's Service and Pods",fieldPath=".metadata.name",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 54",message="metadata.name must be at most 54 characters, so that the launcher's name '<name>-launcher' fits in 63",fieldPath=".metadata.name",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.mpiReplicaSpecs.Worker) || !has(self.spec.mpiReplicaSpecs.Worker.replicas) || self.spec.mpiReplicaSpecs.Worker.replicas <= 1 || size(self.metadata.name) + 8 + size(string(self.spec.mpiReplicaSpecs.Worker.replicas - 1)) <= 63",message="metadata.name is too long for spec.mpiReplicaSpecs.Worker.replicas: the last worker's name '<name>-worker-<replicas-1>' must fit in 63 characters",fieldPath=".metadata.name",reason="FieldValueInvalid"
type MPIJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MPIJobSpec `json:"spec"`
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// MPIJobList is a list of MPIJobs.
//
// +kubebuilder:object:root=true
type MPIJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MPIJob `json:"items"`
}

// MPIJobSpec is the desired state of an MPIJob.
//
// +kubebuilder:validation:XValidation:rule="has(oldSelf.runPolicy.managedBy) == has(self.runPolicy.managedBy) && (!has(self.runPolicy.managedBy) || self.runPolicy.managedBy == oldSelf.runPolicy.managedBy)",message="spec.runPolicy.managedBy is immutable",fieldPath=".runPolicy.managedBy",reason="FieldValueInvalid"
type MPIJobSpec struct {
	// Number of slots per worker in the hostfile: how many ranks mpirun
	// may place on each worker. Defaults to 1.
	// +optional
	// +kubebuilder:default:=1
	// +kubebuilder:validation:Minimum=1
	SlotsPerWorker *int32 `json:"slotsPerWorker,omitempty"`

	// Whether the launcher also runs ranks (it is then listed in the
	// hostfile). Defaults to false.
	// +optional
	// +kubebuilder:default:=false
	RunLauncherAsWorker *bool `json:"runLauncherAsWorker,omitempty"`

	// Runtime policies of the job: cleanup, TTL, deadline, retries,
	// suspension and which controller manages it.
	// +optional
	// +kubebuilder:default:={}
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`

	// The replicas of the job, keyed by role: "Launcher" (exactly one) and
	// "Worker" (zero or more).
	// +required
	// +kubebuilder:validation:MaxProperties=2
	// +kubebuilder:validation:XValidation:rule="self.all(role, role == 'Launcher' || role == 'Worker')",message="spec.mpiReplicaSpecs may only have the keys Launcher and Worker",reason="FieldValueInvalid"
	// +kubebuilder:validation:XValidation:rule="has(self.Launcher)",message="spec.mpiReplicaSpecs.Launcher is required",reason="FieldValueRequired"
	// +kubebuilder:validation:XValidation:rule="!has(self.Launcher) || !has(self.Launcher.replicas) || self.Launcher.replicas == 1",message="spec.mpiReplicaSpecs.Launcher.replicas must be 1",fieldPath=".Launcher.replicas",reason="FieldValueInvalid"
	// +kubebuilder:validation:XValidation:rule="!has(self.Launcher) || !has(self.Launcher.restartPolicy) || self.Launcher.restartPolicy != 'Always'",message="spec.mpiReplicaSpecs.Launcher.restartPolicy must be OnFailure, Never or ExitCode: the launcher runs to completion",fieldPath=".Launcher.restartPolicy",reason="FieldValueInvalid"
	MPIReplicaSpecs map[MPIReplicaType]*ReplicaSpec `json:"mpiReplicaSpecs"`

	// Directory where the job's SSH key pair and authorized_keys are
	// mounted in the launcher and workers. Defaults to "/root/.ssh"; use
	// the home of the image's user (e.g. /home/mpiuser/.ssh) for non-root
	// images.
	// +optional
	// +kubebuilder:default:="/root/.ssh"
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/') && self != '/'",message="spec.sshAuthMountPath must be an absolute path other than /",reason="FieldValueInvalid"
	SSHAuthMountPath string `json:"sshAuthMountPath,omitempty"`

	// When the launcher is created: AtStartup (default, together with the
	// workers) or WaitForWorkersReady (once every worker Pod is Ready).
	// +optional
	// +kubebuilder:validation:Enum:=AtStartup;WaitForWorkersReady
	// +kubebuilder:default:=AtStartup
	LauncherCreationPolicy LauncherCreationPolicy `json:"launcherCreationPolicy,omitempty"`

	// The MPI implementation the images use: OpenMPI (default), Intel or
	// MPICH. It decides the hostfile syntax and the launcher's environment.
	// +optional
	// +kubebuilder:validation:Enum:=OpenMPI;Intel;MPICH
	// +kubebuilder:default:=OpenMPI
	MPIImplementation MPIImplementation `json:"mpiImplementation,omitempty"`
}

// RunPolicy holds the runtime policies of a job.
type RunPolicy struct {
	// Which worker Pods are deleted when the job finishes: None (default),
	// Running or All.
	// +optional
	// +kubebuilder:validation:Enum:=None;Running;All
	CleanPodPolicy *CleanPodPolicy `json:"cleanPodPolicy,omitempty"`

	// Seconds after the job finished when the MPIJob itself is deleted.
	// Unset: never.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// Seconds, counted from status.startTime, that the job may be active
	// (including the wait for workers) before it is failed.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// Number of retries of the launcher before the job is failed. Unset:
	// the batch/v1 Job default (6).
	// +optional
	// +kubebuilder:validation:Minimum=0
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// Gang scheduling of the job's Pods. Used only when the operator runs
	// with --gang-scheduling (volcano, scheduler-plugins or another
	// scheduler-plugins scheduler's name, or kubernetes); otherwise ignored.
	// The operator then makes a group named after the job (a Volcano
	// PodGroup; a scheduler-plugins PodGroup; or a Kubernetes Workload and
	// PodGroup of scheduling.k8s.io/v1alpha3) before the Pods, puts the
	// workers and the launcher in it (schedulerName and the group's
	// annotation or label, or spec.schedulingGroup), keeps it in step with
	// the job (a scale changes its size), and deletes it when the job is
	// suspended or when a finished job's Pods are cleaned up
	// (cleanPodPolicy Running or All). With no schedulingPolicy the group
	// holds every worker and the launcher.
	// +optional
	SchedulingPolicy *SchedulingPolicy `json:"schedulingPolicy,omitempty"`

	// Whether the job is suspended: no Pods exist and the launcher Job is
	// suspended. Kueue sets and clears it. Resuming resets startTime.
	// +optional
	// +kubebuilder:default:=false
	Suspend *bool `json:"suspend,omitempty"`

	// The controller that manages this job. Empty or
	// "kubeflow.org/mpi-operator": this operator; "kueue.x-k8s.io/multikueue":
	// MultiKueue, and this operator leaves the job alone. Immutable.
	// +optional
	// +kubebuilder:validation:Enum:="";"kubeflow.org/mpi-operator";"kueue.x-k8s.io/multikueue"
	ManagedBy *string `json:"managedBy,omitempty"`
}

// SchedulingPolicy holds gang-scheduling parameters, passed to the group
// object that --gang-scheduling selects.
type SchedulingPolicy struct {
	// How many of the job's Pods must be schedulable together (the group's
	// minMember, or minCount of the Workload API's gang policy). Defaults
	// to workers + 1 (the launcher). With launcherCreationPolicy
	// WaitForWorkersReady the launcher Pod is only made once the workers
	// are Ready, so it cannot be in the gang: the default is then the
	// number of workers, and a larger value is lowered to it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinAvailable *int32 `json:"minAvailable,omitempty"`

	// Volcano queue of the PodGroup; defaults to the MPIJob's
	// scheduling.volcano.sh/queue-name annotation. Ignored by the other
	// schedulers.
	// +optional
	Queue string `json:"queue,omitempty"`

	// Resources the gang needs at the least, so Volcano and
	// scheduler-plugins turn it away early from a cluster that cannot hold
	// it. Defaults to what the containers of the gang's Pods request
	// (limits where requests are missing), counted as upstream counts it:
	// when the gang is smaller than the job, the role with the lower
	// PriorityClass value (the workers on a tie) is counted with
	// minAvailable - 1 Pods; when the launcher is outside the gang
	// (WaitForWorkersReady), minAvailable workers. Not used by kubernetes,
	// whose scheduler reads the Pods.
	// +optional
	MinResources *corev1.ResourceList `json:"minResources,omitempty"`

	// PriorityClass of the group (Volcano and kubernetes); defaults to the
	// launcher template's priorityClassName, then the workers'.
	// scheduler-plugins' PodGroup has no such field; each Pod's own
	// priorityClassName still applies.
	// +optional
	PriorityClass string `json:"priorityClass,omitempty"`

	// How long, in seconds, scheduler-plugins' coscheduling holds the
	// gang's Pods waiting for the rest; 0 (the default) means the plugin's
	// own default. Ignored by Volcano and kubernetes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// ReplicaSpec describes the Pods of one role.
//
// +kubebuilder:validation:XValidation:rule="has(self.template) && has(self.template.spec) && has(self.template.spec.containers) && size(self.template.spec.containers) > 0",message="template.spec.containers must list at least one container",reason="FieldValueRequired"
type ReplicaSpec struct {
	// Number of Pods. Launcher: 1. Worker: defaults to 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// Template of the role's Pods.
	// +optional
	Template corev1.PodTemplateSpec `json:"template,omitempty"`

	// What happens when a Pod of this role fails: Always, OnFailure, Never
	// or ExitCode (exit codes 1-127 are permanent, 128-255 retried).
	// Defaults to OnFailure for the launcher and Never for workers.
	// +optional
	// +kubebuilder:validation:Enum:=Always;OnFailure;Never;ExitCode
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
}

// JobStatus is the observed state of an MPIJob.
type JobStatus struct {
	// Current conditions of the job, one per type.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []JobCondition `json:"conditions,omitempty"`

	// Pod counts per role.
	// +optional
	ReplicaStatuses map[MPIReplicaType]*ReplicaStatus `json:"replicaStatuses,omitempty"`

	// When the controller started the job (reset on resume).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// When the job finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// When the controller last wrote this status.
	// +optional
	LastReconcileTime *metav1.Time `json:"lastReconcileTime,omitempty"`
}

// ReplicaStatus counts the Pods of one role.
type ReplicaStatus struct {
	// Pods that are running (or pending, for the launcher).
	// +optional
	Active int32 `json:"active,omitempty"`

	// Pods that succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// Pods that failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// Deprecated: use selector.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// Label selector of the role's Pods, in string form, for the scale
	// subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// JobCondition is one observed condition of a job.
type JobCondition struct {
	// Type of the condition.
	// +required
	Type JobConditionType `json:"type"`

	// Status of the condition: True, False or Unknown.
	// +required
	// +kubebuilder:validation:Enum:=True;False;Unknown
	Status corev1.ConditionStatus `json:"status"`

	// Machine-readable reason of the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Human-readable details of the last transition.
	// +optional
	Message string `json:"message,omitempty"`

	// Last time the condition was updated.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`

	// Last time the condition changed status.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}
