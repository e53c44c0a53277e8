package controller

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// children is what the cache holds of a job's Pods and launcher Job.
type children struct {
	// workers are the job's worker Pods by index, terminating ones included
	// (their names are still taken).
	workers map[int]*corev1.Pod
	// surplus are worker Pods whose index is beyond spec replicas.
	surplus []*corev1.Pod
	// launcher is the launcher Job, nil if there is none or if it is the
	// one a recorded restart ends.
	launcher *batchv1.Job
	// replaced is the launcher Job a recorded restart ends, while the
	// cache still shows it.
	replaced *batchv1.Job
	// launcherPods are the launcher Job's Pods.
	launcherPods []*corev1.Pod
	// formerLaunchers are the Pods of earlier launcher Jobs that have not
	// stopped yet: a new attempt must not run mpirun beside them.
	formerLaunchers []*corev1.Pod
	// stranded are Pods of launcher Jobs that are gone, held by the Job
	// controller's finalizer while being deleted (stranded.go).
	stranded []*corev1.Pod
	// record is the job's restart record, when it has one.
	record *restartRecord
	// launcherRunning: a Pod of the launcher Job runs. Read from the Pod
	// itself, as the Job controller reports status.ready only in batches
	// of a second.
	launcherRunning bool
	// launcherSucceeded: the launcher Job is Complete, or a Pod of it
	// succeeds (succeeds) and the Job is not failing. With one completion
	// that Pod's success is the Job's, which the Job controller writes
	// about two seconds later: it takes Pod events in batches of a second
	// and counts a finished Pod in two writes (hack/measure-startup.sh
	// measured 2.1 s).
	launcherSucceeded bool
}

func (r *Reconciler) observe(ctx context.Context, job *kubeflow.MPIJob) (*children, error) {
	kids := &children{workers: map[int]*corev1.Pod{}}
	if rec, ok := restartOf(job); ok {
		kids.record = &rec
	}
	pods, err := r.jobPods(ctx, job, builder.RoleWorker)
	if err != nil {
		return nil, err
	}
	n := int(job.Workers())
	for _, pod := range pods {
		if !metav1.IsControlledBy(pod, job) {
			continue
		}
		idx, ok := builder.WorkerIndex(job, pod.Name)
		if !ok || idx >= n {
			kids.surplus = append(kids.surplus, pod)
			continue
		}
		kids.workers[idx] = pod
	}

	if err := r.observeLauncherJobs(ctx, job, kids); err != nil {
		return nil, err
	}
	if err := r.observeLauncherPods(ctx, job, kids); err != nil {
		return nil, err
	}
	return kids, nil
}

// observeLauncherJobs finds the launcher Job of the current attempt, named
// for the restarts recorded (builder.LauncherJobName), and the one the last
// restart replaces while the cache still shows it. A launcher that
// completed before its restart was carried out has done its work: it
// stays the launcher, and the outcome stands. An operator from before
// launcher names carried the attempt made every successor under
// upstream's name: such a Job, not the one replaced, is the launcher too.
func (r *Reconciler) observeLauncherJobs(ctx context.Context, job *kubeflow.MPIJob, kids *children) error {
	var restarts int32
	if kids.record != nil {
		restarts = kids.record.Count
	}
	names := []string{builder.LauncherJobName(job, restarts)}
	if restarts > 0 {
		names = append(names, builder.LauncherJobName(job, restarts-1))
		if restarts > 1 {
			names = append(names, builder.LauncherName(job))
		}
	}
	for i, name := range names {
		l := &batchv1.Job{}
		err := r.Client.Get(ctx, objectKey(job, name), l)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("getting launcher Job %s: %w", name, err)
		case !metav1.IsControlledBy(l, job):
			if i == 0 {
				return fmt.Errorf("job %s exists and is not controlled by this MPIJob", name)
			}
			continue
		}
		switch {
		case kids.record != nil && l.UID == kids.record.Replaces && jobCondition(l, batchv1.JobComplete) != nil:
			kids.launcher, kids.replaced = l, nil
			return nil
		case kids.record != nil && l.UID == kids.record.Replaces:
			kids.replaced = l
		case kids.launcher == nil:
			kids.launcher = l
		}
	}
	return nil
}

// restart returns the job's restart record, if it has one.
func (k *children) restart() (restartRecord, bool) {
	if k.record == nil {
		return restartRecord{}, false
	}
	return *k.record, true
}

// observeLauncherPods sorts the launcher Pods into the current launcher
// Job's and the unfinished ones of earlier Jobs.
func (r *Reconciler) observeLauncherPods(ctx context.Context, job *kubeflow.MPIJob, kids *children) error {
	pods, err := r.jobPods(ctx, job, builder.RoleLauncher)
	if err != nil {
		return err
	}
	if kids.launcher == nil {
		if kids.launcher, err = r.unseenLauncher(ctx, job, kids, pods); err != nil {
			return err
		}
	}
	for _, p := range pods {
		switch {
		case kids.launcher != nil && metav1.IsControlledBy(p, kids.launcher):
			kids.launcherPods = append(kids.launcherPods, p)
			kids.launcherRunning = kids.launcherRunning || isRunning(p)
			kids.launcherSucceeded = kids.launcherSucceeded || succeeds(p)
		default:
			if !isPodFinished(p) {
				kids.formerLaunchers = append(kids.formerLaunchers, p)
			}
			if isStranded(p) && (kids.replaced == nil || !metav1.IsControlledBy(p, kids.replaced)) {
				kids.stranded = append(kids.stranded, p)
			}
		}
	}
	if l := kids.launcher; l != nil {
		kids.launcherSucceeded = jobCondition(l, batchv1.JobComplete) != nil ||
			kids.launcherSucceeded && jobCondition(l, batchv1.JobFailed) == nil && jobCondition(l, batchv1.JobFailureTarget) == nil
	}
	return nil
}

// unseenLauncher returns this attempt's launcher Job when the cache shows
// a Pod of it but not the Job: Pods and Jobs are watched apart, and the
// Job controller's Pod can arrive first. Taken for an earlier launcher's,
// the Pod would be deleted, and with it the attempt (in e2e, a job of
// backoffLimit 0 failed before mpirun ran). The Job is read from the API
// server; a Job that is gone or being deleted leaves its Pods former
// launchers, as before. A Job upstream's operator made (an operator swap
// while its launcher ran) lacks the labels our cache selects by: it is
// adopted, so that its updates reach the cache, and its end this
// controller.
func (r *Reconciler) unseenLauncher(ctx context.Context, job *kubeflow.MPIJob, kids *children, pods []*corev1.Pod) (*batchv1.Job, error) {
	rec, _ := kids.restart()
	name := builder.LauncherJobName(job, rec.Count)
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.Kind != "Job" || ref.Name != name {
			continue
		}
		l := &batchv1.Job{}
		err := r.APIReader.Get(ctx, objectKey(job, name), l)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("reading launcher Job %s: %w", name, err)
		case l.UID != ref.UID || !metav1.IsControlledBy(l, job) || l.DeletionTimestamp != nil:
			return nil, nil
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Launcher Pod seen before its Job", "pod", p.Name, "launcherJob", name)
		return l, r.adopt(ctx, l, builder.JobLabels(job))
	}
	return nil, nil
}

// isTerminating reports whether a Pod is being deleted.
func isTerminating(pod *corev1.Pod) bool { return pod.DeletionTimestamp != nil }

func isRunning(pod *corev1.Pod) bool {
	return !isTerminating(pod) && pod.Status.Phase == corev1.PodRunning
}

func isPodReady(pod *corev1.Pod) bool {
	if !isRunning(pod) {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// succeeds reports whether a Pod has Succeeded or will: every container
// exited 0, and none is restarted (the Pod's restartPolicy is not
// Always). The kubelet writes the Succeeded phase only once it has torn
// the Pod down, a second after it reports the exit (hack/measure-startup.sh).
//
// A Pod being deleted never counts: the Job controller does not count it
// either (it stops tracking the Pods it deletes when the Job is
// suspended) and makes another. A launcher preempted by Kueue whose
// program ignored SIGTERM ran on through its grace period and exited 0
// against the resumed job's new workers; counted, it ended the job, its
// workers were cleaned up, and the Job's new launcher Pod waited for them
// for ever (TestKueuePreemptsALowerPriorityJobWhichThenResumes, 4 runs
// of 5). A Pod that succeeded before its deletion was counted by the Job
// controller, whose Complete condition then ends the job.
func succeeds(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	if pod.Status.Phase == corev1.PodSucceeded {
		return true
	}
	if pod.Status.Phase == corev1.PodFailed || pod.Spec.RestartPolicy == corev1.RestartPolicyAlways ||
		len(pod.Status.ContainerStatuses) < len(pod.Spec.Containers) {
		return false
	}
	for _, c := range pod.Status.ContainerStatuses {
		if t := c.State.Terminated; t == nil || t.ExitCode != 0 {
			return false
		}
	}
	return len(pod.Status.ContainerStatuses) > 0
}

func isPodFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// allWorkers reports whether every one of the job's n workers exists and
// satisfies ok.
func (k *children) allWorkers(n int, ok func(*corev1.Pod) bool) bool {
	for i := range n {
		p := k.workers[i]
		if p == nil || !ok(p) {
			return false
		}
	}
	return true
}

// runningWorkers lists the indices of running workers, in order.
func (k *children) runningWorkers(n int) []int {
	var out []int
	for i := range n {
		if p := k.workers[i]; p != nil && isRunning(p) {
			out = append(out, i)
		}
	}
	return out
}

// jobPods returns the cached Pods of the job's role, shared with the cache:
// they are only read, never changed. The Pod stores hand out the cached
// objects themselves, found by their index of the job-name and role labels
// (PodStores.InJob); the cache holds only Pods with our operator label.
// Without the stores (unit tests, on a fake client) the list matches the
// two labels, and skips the cache's deep copy.
func (r *Reconciler) jobPods(ctx context.Context, job *kubeflow.MPIJob, role string) ([]*corev1.Pod, error) {
	pods, ok, err := r.Pods.InJob(job.Namespace, job.Name, role)
	if ok || err != nil {
		return pods, err
	}
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(job.Namespace),
		client.MatchingLabels{kubeflow.LabelJobName: job.Name, kubeflow.LabelJobRole: role}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing %s Pods: %w", role, err)
	}
	pods = make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	return pods, nil
}
