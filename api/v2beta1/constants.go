package v2beta1

// MPIReplicaType is a role in an MPIJob.
type MPIReplicaType string

const (
	// MPIReplicaTypeLauncher is the role of the Pod that runs mpirun.
	MPIReplicaTypeLauncher MPIReplicaType = "Launcher"
	// MPIReplicaTypeWorker is the role of the Pods that run sshd and ranks.
	MPIReplicaTypeWorker MPIReplicaType = "Worker"
)

// MPIImplementation names the MPI library of the job's images.
type MPIImplementation string

const (
	MPIImplementationOpenMPI MPIImplementation = "OpenMPI"
	MPIImplementationIntel   MPIImplementation = "Intel"
	MPIImplementationMPICH   MPIImplementation = "MPICH"
)

// LauncherCreationPolicy says when the launcher Job is created.
type LauncherCreationPolicy string

const (
	// LauncherCreationPolicyAtStartup creates the launcher with the workers.
	LauncherCreationPolicyAtStartup LauncherCreationPolicy = "AtStartup"
	// LauncherCreationPolicyWaitForWorkersReady creates the launcher once
	// every worker Pod is Ready, so mpirun never meets an unreachable host.
	LauncherCreationPolicyWaitForWorkersReady LauncherCreationPolicy = "WaitForWorkersReady"
)

// CleanPodPolicy says which worker Pods are deleted when a job finishes.
type CleanPodPolicy string

const (
	// CleanPodPolicyNone keeps every worker Pod.
	CleanPodPolicyNone CleanPodPolicy = "None"
	// CleanPodPolicyRunning deletes the worker Pods that have not finished.
	CleanPodPolicyRunning CleanPodPolicy = "Running"
	// CleanPodPolicyAll deletes every worker Pod.
	CleanPodPolicyAll CleanPodPolicy = "All"
)

// RestartPolicy says what happens when a Pod of a role fails.
type RestartPolicy string

const (
	RestartPolicyAlways    RestartPolicy = "Always"
	RestartPolicyOnFailure RestartPolicy = "OnFailure"
	RestartPolicyNever     RestartPolicy = "Never"
	// RestartPolicyExitCode treats exit codes 1-127 as permanent failures
	// and 128-255 (signals) as retryable.
	RestartPolicyExitCode RestartPolicy = "ExitCode"
)

// JobConditionType is the type of a JobCondition.
type JobConditionType string

const (
	JobCreated    JobConditionType = "Created"
	JobRunning    JobConditionType = "Running"
	JobRestarting JobConditionType = "Restarting"
	JobSucceeded  JobConditionType = "Succeeded"
	JobSuspended  JobConditionType = "Suspended"
	JobFailed     JobConditionType = "Failed"
)

// Values of spec.runPolicy.managedBy.
const (
	// KubeflowJobController is the value naming this operator.
	KubeflowJobController = "kubeflow.org/mpi-operator"
	// MultiKueueController is the value naming Kueue's MultiKueue, which
	// runs the job on another cluster; this operator leaves it alone.
	MultiKueueController = "kueue.x-k8s.io/multikueue"
)

// Labels on every child object. Kueue and users select Pods by these names,
// which are those of the Kubeflow training operators.
const (
	LabelJobName      = "training.kubeflow.org/job-name"
	LabelOperatorName = "training.kubeflow.org/operator-name"
	LabelJobRole      = "training.kubeflow.org/job-role"
	LabelReplicaIndex = "training.kubeflow.org/replica-index"
	LabelReplicaType  = "training.kubeflow.org/replica-type"

	// OperatorName is the value of LabelOperatorName on our children.
	OperatorName = "mpi-operator"
)

// Defaults of the spec.
const (
	DefaultSSHAuthMountPath = "/root/.ssh"
	DefaultSlotsPerWorker   = 1
)
