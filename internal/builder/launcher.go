package builder

import (
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// LauncherJob is the batch/v1 Job whose single Pod runs mpirun. The Job
// gives the launcher retries (backoffLimit) and suspension; suspend is
// decided by the controller (the MPIJob is suspended, or the launcher waits
// for its workers).
func LauncherJob(job *kubeflow.MPIJob, suspend bool, opts Options) *batchv1.Job {
	labels := RoleLabels(job, RoleLauncher)
	podLabels := maps.Clone(labels)
	if rankOffset(job) == 1 {
		podLabels[kubeflow.LabelReplicaIndex] = "0"
	}
	t := podTemplate(job, kubeflow.MPIReplicaTypeLauncher, podLabels)
	for _, k := range JobControllerLabels {
		// The API server sets them to the Job's own name and uid, and
		// refuses the Job when the template has other values (found by
		// FuzzChildrenAreAdmitted).
		delete(t.Labels, k)
	}
	spec := &t.Spec
	placeUnderService(job, spec, LauncherName(job), opts)
	noTokenByDefault(spec)
	addSSHAuth(job, spec)
	addConfig(job, spec)
	addEnv(spec, launcherEnv(job))
	if waitsForWorkers(job) {
		waitForWorkers(spec, asksDNSOnceTold(job, opts))
	}

	// Always is refused for the launcher (the CRD's rules, Validate).
	policy := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].RestartPolicy
	spec.RestartPolicy = podRestartPolicy(policy)

	return &batchv1.Job{
		ObjectMeta: objectMeta(job, LauncherName(job), labels),
		Spec: batchv1.JobSpec{
			BackoffLimit:     copyInt32(job.Spec.RunPolicy.BackoffLimit),
			Suspend:          &suspend,
			Template:         t,
			PodFailurePolicy: launcherFailurePolicy(policy, spec.RestartPolicy),
			// A replacement launcher Pod only once the old one is gone:
			// two mpirun of one job at once would fight over the workers
			// (kubernetes#115844; upstream sets it too).
			PodReplacementPolicy: ptr.To(batchv1.Failed),
		},
	}
}

// JobControllerLabels are the labels the Job API puts on a Job's
// template; its selector depends on them.
var JobControllerLabels = []string{
	batchv1.ControllerUidLabel, batchv1.JobNameLabel, "controller-uid", "job-name",
}

// launcherFailurePolicy keeps failures caused by the infrastructure
// (eviction, preemption, node loss) from using up backoffLimit and, for
// ExitCode, fails the job at once on a permanent exit code (1-127).
// Kubernetes allows a pod failure policy only with restartPolicy Never.
func launcherFailurePolicy(policy kubeflow.RestartPolicy, podPolicy corev1.RestartPolicy) *batchv1.PodFailurePolicy {
	if podPolicy != corev1.RestartPolicyNever {
		return nil
	}
	rules := []batchv1.PodFailurePolicyRule{{
		Action: batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		}},
	}}
	if policy == kubeflow.RestartPolicyExitCode {
		permanent := make([]int32, 0, 127)
		for c := int32(1); c <= 127; c++ {
			permanent = append(permanent, c)
		}
		rules = append(rules, batchv1.PodFailurePolicyRule{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				Operator: batchv1.PodFailurePolicyOnExitCodesOpIn,
				Values:   permanent,
			},
		})
	}
	return &batchv1.PodFailurePolicy{Rules: rules}
}

// WaitForWorkersContainer is the name of the launcher's init container
// that waits until every host of the hostfile resolves, when the wait
// cannot run in the launcher's own container (waitForWorkers); there, the
// wait's $0.
const WaitForWorkersContainer = "wait-for-workers"

// resolvConfPath is the Pod's resolver configuration, which the kubelet
// writes.
const resolvConfPath = "/etc/resolv.conf"

// hostnamePath holds the container's hostname, in every image.
const hostnamePath = "/proc/sys/kernel/hostname"

// waitForWorkersScript waits until every host of the hostfile has a DNS
// record. A launcher created at startup would otherwise run mpirun before
// the workers' records exist, and ssh gives up at once on a name it cannot
// resolve (connection attempts only retry a refused connection). A
// worker's record appears once its container runs (Published), so the
// wait also outlasts a worker's image pull, which ssh's connection
// attempts (10, a second apart) may not. Where the cluster's DNS caches
// denials, waitForWordScript comes first (published.go).
//
// It asks again every 0.1 s: a worker's record appears as soon as its Pod
// runs, and polling once a second cost half a second on average
// (hack/measure-startup.sh). Only the first unresolved name is polled.
// Each try asks for the name made absolute with the Pod's first search
// domain, its namespace's (<namespace>.svc.<cluster domain> under the
// ClusterFirst DNS policies), where ssh will find it: 2 queries (A and
// AAAA). The name as written went through every search domain, 14 queries
// a try while it did not resolve, and CoreDNS on a busy 2-core cluster
// then timed out (ssh: "Temporary failure in name resolution" in e2e).
// Once a second the name as written is tried too, for a Pod whose DNS
// policy puts another domain first. A sleep that takes whole seconds only
// (a POSIX one) falls back to 1 s. Each name is reported once. The
// launcher's own entry (LauncherHost) is its own hostname, or localhost:
// nothing to wait for.
const waitForWorkersScript = `dom=$(sed -n 's/^search[[:space:]]*\([^[:space:]]*\).*/\1/p' ` + resolvConfPath + ` 2>/dev/null | head -n 1)
self=$(cat ` + hostnamePath + ` 2>/dev/null)
for h in $(sed -e 's/[ :].*//' ` + HostfilePath + `); do
  [ "$h" = localhost ] || [ "$h" = "$self" ] && continue
  q=$h
  case $h in
  *.) ;;
  *."$dom") q=$h. ;;
  *) [ -n "$dom" ] && q=$h.$dom. ;;
  esac
  n=0
  until getent hosts "$q" >/dev/null 2>&1 || { [ $((n % 10)) -eq 9 ] && getent hosts "$h" >/dev/null 2>&1; }; do
    [ $n -eq 0 ] && echo "waiting for $h to resolve"
    n=$((n + 1))
    sleep 0.1 2>/dev/null || sleep 1
  done
done`

// waitsForWorkers reports whether the job's launcher waits for its
// workers' names: it is made with them, not once they are ready.
func waitsForWorkers(job *kubeflow.MPIJob) bool {
	return job.Spec.LauncherCreationPolicy == kubeflow.LauncherCreationPolicyAtStartup
}

// waitForWorkers makes mpirun wait until every host of the hostfile
// resolves. When the launcher's container names its command, the wait
// runs in that container, which then execs the command: as an init
// container it cost a kubelet round trip, since the kubelet starts the
// next container only at its next look at the Pod's containers (a relist,
// once a second) after the previous one exited (hack/measure-startup.sh).
// A container without a command runs its image's entrypoint, which the
// operator cannot see to exec: the wait is then an init container.
func waitForWorkers(spec *corev1.PodSpec, told bool) {
	if len(spec.Containers) == 0 {
		return
	}
	script := waitScript(told)
	c := &spec.Containers[0]
	if waitsInInitContainer(spec) {
		addWaitForWorkers(spec, script)
		c = &spec.InitContainers[0]
	} else {
		c.Command = append([]string{"sh", "-c", script + "\nexec \"$@\"", WaitForWorkersContainer}, c.Command...)
	}
	if told {
		addPublishedVolume(spec, c)
	}
}

// waitsInInitContainer reports whether the launcher's wait for its
// workers is an init container: its first container has no command.
func waitsInInitContainer(spec *corev1.PodSpec) bool {
	return len(spec.Containers) > 0 && len(spec.Containers[0].Command) == 0
}

// addWaitForWorkers runs the wait script before the launcher's
// containers, in the launcher's own image (which has a shell: it runs
// mpirun), with its security context and its resources (so a quota that
// demands limits admits it, and the Pod's effective request is unchanged).
func addWaitForWorkers(spec *corev1.PodSpec, script string) {
	if len(spec.Containers) == 0 {
		return
	}
	main := spec.Containers[0]
	spec.InitContainers = append([]corev1.Container{{
		Name:            WaitForWorkersContainer,
		Image:           main.Image,
		ImagePullPolicy: main.ImagePullPolicy,
		Command:         []string{"sh", "-c", script},
		SecurityContext: main.SecurityContext.DeepCopy(),
		Resources:       *main.Resources.DeepCopy(),
		VolumeMounts:    []corev1.VolumeMount{{Name: configVolumeName, MountPath: ConfigMountPath, ReadOnly: true}},
	}}, spec.InitContainers...)
}

// addConfig mounts the hostfile ConfigMap at /etc/mpi in every container:
// the hostfile, discover_hosts.sh, known_hosts and ssh_config are no
// secret.
func addConfig(job *kubeflow.MPIJob, spec *corev1.PodSpec) {
	spec.Volumes = append(spec.Volumes, jobConfigVolume(job,
		corev1.KeyToPath{Key: HostfileKey, Path: HostfileKey, Mode: ptrMode(configFileMode)},
		corev1.KeyToPath{Key: DiscoverHostsKey, Path: DiscoverHostsKey, Mode: ptrMode(scriptFileMode)},
		corev1.KeyToPath{Key: KnownHostsKey, Path: KnownHostsKey, Mode: ptrMode(configFileMode)},
		corev1.KeyToPath{Key: SSHConfigKey, Path: SSHConfigKey, Mode: ptrMode(configFileMode)},
	))
	mount := corev1.VolumeMount{Name: configVolumeName, MountPath: ConfigMountPath, ReadOnly: true}
	for i := range spec.Containers {
		spec.Containers[i].VolumeMounts = append(spec.Containers[i].VolumeMounts, mount)
	}
}

// addSSHClientConfig mounts the job's known_hosts and ssh_config alone at
// /etc/mpi in a worker's first container: with Open MPI's tree spawn, the
// daemon mpirun starts on one worker starts those of others over ssh, with
// the same options, so it checks their host keys against the same file.
func addSSHClientConfig(job *kubeflow.MPIJob, spec *corev1.PodSpec) {
	spec.Volumes = append(spec.Volumes, jobConfigVolume(job,
		corev1.KeyToPath{Key: KnownHostsKey, Path: KnownHostsKey, Mode: ptrMode(configFileMode)},
		corev1.KeyToPath{Key: SSHConfigKey, Path: SSHConfigKey, Mode: ptrMode(configFileMode)},
	))
	if len(spec.Containers) == 0 {
		return
	}
	c := &spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: configVolumeName, MountPath: ConfigMountPath, ReadOnly: true})
}

func ptrMode(m int32) *int32 { return &m }

// copyInt32 copies a pointer field, so the built object shares no memory
// with the job.
func copyInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	return ptrMode(*p)
}

// jobConfigVolume is the job's ConfigMap as a volume holding the given keys.
func jobConfigVolume(job *kubeflow.MPIJob, items ...corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{
		Name: configVolumeName,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(job)},
			Items:                items,
		}},
	}
}
