package controller

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// When the launcher fails for good, the MPIJob says which attempt failed
// and how, and its Failed event carries the last lines of that attempt's
// log: the Pod, and its log with it, goes when the job is deleted or
// cleaned up, and a user who finds the job Failed later has nothing else
// to go on (kubeflow/mpi-operator#354).

// LogReader reads the end of a container's log.
type LogReader interface {
	// TailLines returns the last lines of the container's log, of its
	// previous run when previous is set.
	TailLines(ctx context.Context, namespace, pod, container string, previous bool, lines int64) (string, error)
}

// ClientsetLogs reads logs through the API server (pods/log).
type ClientsetLogs struct{ Clientset kubernetes.Interface }

// logLimit bounds what is read of a log: an event holds 1 KiB at most.
const logLimit = 4096

// TailLines implements LogReader.
func (c ClientsetLogs) TailLines(ctx context.Context, namespace, pod, container string, previous bool, lines int64) (string, error) {
	raw, err := c.Clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{
		Container: container, Previous: previous, TailLines: &lines, LimitBytes: ptr.To[int64](logLimit),
	}).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the log of Pod %s: %w", pod, err)
	}
	return string(raw), nil
}

// failedLauncherLines is how many lines of a failed launcher's log its
// event keeps.
const failedLauncherLines = 20

// lastFailedAttempt returns the launcher Pod whose program failed last,
// and how it failed; nil if none did.
func lastFailedAttempt(pods []*corev1.Pod) (*corev1.Pod, string) {
	var last *corev1.Pod
	for _, p := range pods {
		if p.Status.Phase != corev1.PodFailed && lastTermination(p).Equal(p.CreationTimestamp.Time) {
			continue // neither failed nor restarted after a failure
		}
		if last == nil || lastTermination(p).After(lastTermination(last)) {
			last = p
		}
	}
	if last == nil {
		return nil, ""
	}
	return last, attemptFailure(last)
}

// attemptFailure says how a launcher attempt failed: its container's exit
// code and reason (OOMKilled, Error), or what took the Pod away.
func attemptFailure(pod *corev1.Pod) string {
	if c := findPodCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue {
		return fmt.Sprintf("Pod %s was disrupted (%s: %s)", pod.Name, c.Reason, c.Message)
	}
	if name, t, _ := failedRun(pod); t != nil {
		return exitedWith(pod.Name, name, t.ExitCode, t.Reason)
	}
	return fmt.Sprintf("Pod %s failed: %s %s", pod.Name, pod.Status.Reason, pod.Status.Message)
}

// exitedWith says that a Pod's container exited with code and reason.
func exitedWith(pod, container string, code int32, reason string) string {
	return fmt.Sprintf("Pod %s: container %s exited with code %d (%s)", pod, container, code, reason)
}

// failedRun is the first of the Pod's containers, in the Pod's order,
// whose run ended with a non-zero exit: its current run or, restarted
// since (restartPolicy OnFailure), its previous one (previous).
func failedRun(pod *corev1.Pod) (name string, t *corev1.ContainerStateTerminated, previous bool) {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return cs.Name, t, false
		}
		if t := cs.LastTerminationState.Terminated; t != nil && t.ExitCode != 0 {
			return cs.Name, t, true
		}
	}
	return "", nil, false
}

// failedContainer names the container of the Pod that exited with an
// error, or else its first (mpirun's). previous: the failed run is the
// container's previous one, as it was restarted (restartPolicy OnFailure).
func failedContainer(pod *corev1.Pod) (name string, previous bool) {
	if name, t, previous := failedRun(pod); t != nil {
		return name, previous
	}
	if len(pod.Spec.Containers) > 0 {
		return pod.Spec.Containers[0].Name, false
	}
	return "", false
}

// readFailedLauncherLog reads the end of the failed launcher attempt's
// log when this reconcile is about to mark the job Failed because of it.
// A log that cannot be read (the node is gone) is left out: the status
// still names the attempt and its exit code.
func (r *Reconciler) readFailedLauncherLog(ctx context.Context, s *state, kids *children) {
	l := kids.launcher
	if r.Logs == nil || l == nil || jobCondition(l, batchv1.JobFailed) == nil || isTrue(s.status, kubeflow.JobFailed) {
		return
	}
	pod, _ := lastFailedAttempt(kids.launcherPods)
	if pod == nil {
		return
	}
	container, previous := failedContainer(pod)
	if container == "" {
		return
	}
	tail, err := r.Logs.TailLines(ctx, pod.Namespace, pod.Name, container, previous, failedLauncherLines)
	if err != nil {
		ctrl.LoggerFrom(ctx).V(2).Info("Could not keep the failed launcher's log", "pod", pod.Name, "err", err)
		return
	}
	s.failedLog = logExcerpt{pod: pod.Name, tail: tail}
}

// logExcerpt is the end of a failed launcher attempt's log.
type logExcerpt struct{ pod, tail string }

// eventNoteLimit is the most an event's note may hold (events.k8s.io/v1).
const eventNoteLimit = 1024

// appendTo returns msg followed by the excerpt, whose start is cut so the
// whole fits an event: the last lines are the ones that say what went
// wrong.
func (e logExcerpt) appendTo(msg string) string {
	if e.pod == "" || strings.TrimSpace(e.tail) == "" {
		return msg
	}
	head := fmt.Sprintf("%s\nLast lines of the log of %s:\n", msg, e.pod)
	tail := strings.ToValidUTF8(e.tail, "")
	if room := eventNoteLimit - len(head); len(tail) > room {
		if room <= 0 {
			return msg
		}
		tail = strings.ToValidUTF8(tail[len(tail)-room:], "")
	}
	return head + tail
}
