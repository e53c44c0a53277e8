package kubectlmpi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// DefaultWatchTimeout bounds `kubectl mpi watch`.
const DefaultWatchTimeout = 10 * time.Minute

func (p *plugin) watchCommand() *cobra.Command {
	timeout := DefaultWatchTimeout
	cmd := &cobra.Command{
		Use:   "watch NAME",
		Short: "Show a live progress line (workers scheduled/running, launcher, phase) until the launcher runs or the job ends",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := p.target()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return watchProgress(ctx, c, ns, args[0], newLineWriter(p.Streams.Out), p.Now)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "give up after this long")
	return cmd
}

// watchProgress keeps the job and its Pods in informers and prints the
// progress line whenever it changes, until the launcher runs or the job
// ends (nil; an error for a failed job) or ctx ends.
func watchProgress(ctx context.Context, c client.WithWatch, namespace, name string, out *lineWriter, now func() time.Time) error {
	// An informer retries a refused list until its context ends: read once
	// first, so a missing job or a missing permission fails at once.
	if _, err := getJob(ctx, c, namespace, name); err != nil {
		return err
	}
	if err := c.List(ctx, &corev1.PodList{}, client.InNamespace(namespace), client.Limit(1)); err != nil {
		return fmt.Errorf("listing Pods in %s: %w", namespace, err)
	}
	jobs := toolscache.NewSharedIndexInformer(listWatch(c, &kubeflow.MPIJobList{},
		client.InNamespace(namespace), client.MatchingFields{"metadata.name": name}), &kubeflow.MPIJob{}, 0, nil)
	pods := toolscache.NewSharedIndexInformer(listWatch(c, &corev1.PodList{},
		client.InNamespace(namespace), client.MatchingLabels{kubeflow.LabelJobName: name}), &corev1.Pod{}, 0, nil)
	// One pending wake-up is enough: each one recomputes from the stores.
	changed := make(chan struct{}, 1)
	wake := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	handler := toolscache.ResourceEventHandlerFuncs{AddFunc: wake, UpdateFunc: func(_, o any) { wake(o) }, DeleteFunc: wake}
	for _, inf := range []toolscache.SharedIndexInformer{jobs, pods} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return fmt.Errorf("watching MPIJob %s/%s: %w", namespace, name, err)
		}
		go inf.RunWithContext(ctx)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), jobs.HasSynced, pods.HasSynced) {
		return fmt.Errorf("watching MPIJob %s/%s: %w", namespace, name, context.Cause(ctx))
	}

	last := ""
	for {
		var job *kubeflow.MPIJob
		if objs := jobs.GetStore().List(); len(objs) > 0 {
			job = objs[0].(*kubeflow.MPIJob)
		} else {
			out.finish()
			return fmt.Errorf("MPIJob %s/%s not found", namespace, name)
		}
		var list []corev1.Pod
		for _, o := range pods.GetStore().List() {
			list = append(list, *o.(*corev1.Pod))
		}
		progress := ProgressOf(job, list)
		if line := progress.String(); line != last {
			last = line
			out.show(fmt.Sprintf("%s %s: %s", age(job.CreationTimestamp, now()), name, line))
		}
		if progress.Done() {
			out.finish()
			if progress.Phase == string(kubeflow.JobFailed) {
				return fmt.Errorf("MPIJob %s/%s failed: %s", namespace, name, findCondition(job, kubeflow.JobFailed).Message)
			}
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			out.finish()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("MPIJob %s/%s: the launcher did not run before the timeout; last: %s", namespace, name, last)
			}
			return ctx.Err()
		}
	}
}

// listWatch lists and watches one kind through the controller-runtime
// client with fixed selectors; the informer's own options (resource
// version, timeouts) pass through Raw.
func listWatch(c client.WithWatch, list client.ObjectList, opts ...client.ListOption) *toolscache.ListWatch {
	with := func(o metav1.ListOptions) []client.ListOption {
		return append([]client.ListOption{&client.ListOptions{Raw: &o}}, opts...)
	}
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l := list.DeepCopyObject().(client.ObjectList)
			return l, c.List(ctx, l, with(o)...)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), with(o)...)
		},
	}
}

// lineWriter shows a progress line: rewritten in place on a terminal, one
// line per change elsewhere (a log, a pipe). A line that cannot be
// written is dropped: the watch's outcome is its exit status.
type lineWriter struct {
	w       io.Writer
	tty     bool
	pending bool
}

func newLineWriter(w io.Writer) *lineWriter {
	f, ok := w.(*os.File)
	return &lineWriter{w: w, tty: ok && term.IsTerminal(int(f.Fd()))}
}

func (l *lineWriter) show(line string) {
	if !l.tty {
		_, _ = fmt.Fprintln(l.w, line)
		return
	}
	_, _ = fmt.Fprintf(l.w, "\r\033[K%s", line)
	l.pending = true
}

func (l *lineWriter) finish() {
	if l.pending {
		_, _ = fmt.Fprintln(l.w)
		l.pending = false
	}
}
