package kubectlmpi

import (
	"context"
	"fmt"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// LogSource streams a Pod's log. The real one goes through the API server
// (pods/log); tests give a fake, as envtest runs no kubelet.
type LogSource interface {
	Stream(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error)
}

// APILogs reads logs through the API server.
type APILogs struct{ Clientset kubernetes.Interface }

// Stream implements LogSource.
func (a APILogs) Stream(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	return a.Clientset.CoreV1().Pods(namespace).GetLogs(pod, opts).Stream(ctx)
}

// LogsOptions are the flags of `kubectl mpi logs`.
type LogsOptions struct {
	// Follow streams the current attempt's log until it ends.
	Follow bool
	// AllAttempts prints every attempt, oldest first, each under a
	// header: each launcher Pod's log, and the previous run of a
	// container the kubelet restarted (restartPolicy OnFailure).
	AllAttempts bool
	// Container is the launcher container to read; its first by default.
	Container string
}

// logPart is one log to print: a Pod's container, current or previous run.
type logPart struct {
	pod       *corev1.Pod
	container string
	previous  bool
	header    string
}

// logPlan lists the logs to print, oldest first; the last is the current
// attempt, the one -f follows. launcherPods need not be sorted.
func logPlan(launcherPods []corev1.Pod, opts LogsOptions) []logPart {
	pods := slices.Clone(launcherPods)
	byCreation(pods)
	if !opts.AllAttempts && len(pods) > 1 {
		pods = pods[len(pods)-1:]
	}
	var parts []logPart
	for i := range pods {
		p := &pods[i]
		c := opts.Container
		if c == "" && len(p.Spec.Containers) > 0 {
			c = p.Spec.Containers[0].Name
		}
		if opts.AllAttempts && restartCount(p, c) > 0 {
			parts = append(parts, logPart{pod: p, container: c, previous: true})
		}
		parts = append(parts, logPart{pod: p, container: c})
	}
	if opts.AllAttempts {
		for i := range parts {
			parts[i].header = fmt.Sprintf("==> attempt %d of %d: %s <==", i+1, len(parts), describeAttempt(&parts[i]))
		}
	}
	return parts
}

func describeAttempt(p *logPart) string {
	s := fmt.Sprintf("Pod %s, container %s", p.pod.Name, p.container)
	if p.previous {
		return s + ", previous run"
	}
	s += ", " + string(p.pod.Status.Phase)
	if t := lastTermination(p.pod, false); t != nil && t.Container == p.container && p.pod.Status.Phase != corev1.PodRunning {
		s += fmt.Sprintf(", exit code %d", t.ExitCode)
	}
	return s
}

func restartCount(p *corev1.Pod, container string) int32 {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container {
			return cs.RestartCount
		}
	}
	return 0
}

// WriteLogs prints the launcher's log from its Pods. A log of an earlier
// attempt that cannot be read (its node is gone) is noted and skipped;
// the current attempt's error is returned.
func WriteLogs(ctx context.Context, w io.Writer, src LogSource, launcherPods []corev1.Pod, opts LogsOptions) error {
	parts := logPlan(launcherPods, opts)
	if len(parts) == 0 {
		return fmt.Errorf("the launcher has no Pod yet")
	}
	out := &printer{w: w}
	for i, part := range parts {
		last := i == len(parts)-1
		if part.header != "" {
			if i > 0 {
				out.println()
			}
			out.println(part.header)
		}
		err := copyLog(ctx, w, src, part, opts.Follow && last)
		if err != nil && last {
			return err
		}
		if err != nil {
			out.printf("(log unavailable: %v)\n", err)
		}
	}
	return out.err
}

func copyLog(ctx context.Context, w io.Writer, src LogSource, part logPart, follow bool) error {
	r, err := src.Stream(ctx, part.pod.Namespace, part.pod.Name, &corev1.PodLogOptions{
		Container: part.container, Previous: part.previous, Follow: follow,
	})
	if err != nil {
		return fmt.Errorf("reading the log of Pod %s: %w", part.pod.Name, err)
	}
	defer func() { _ = r.Close() }()
	if _, err := io.Copy(w, r); err != nil {
		return fmt.Errorf("reading the log of Pod %s: %w", part.pod.Name, err)
	}
	return nil
}
