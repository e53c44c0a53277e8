// Command startup measures where a small MPIJob's start goes on the local
// cluster (hack/cluster/up.sh): an Open MPI job running /opt/mpi/ranks on
// one rank per worker is created RUNS times, and each phase's end (worker
// Pods created, scheduled, started, sshd listening, the launcher's Pod,
// its wait for the workers' names, its start, the first rank's output,
// Succeeded) is printed per run and as the median, from the MPIJob's
// create. Run i of n starts (i-1)/n s after the kubelets settle, so that
// the runs sample the period of the kubelet's relist, which decides when
// the launcher's exit is noticed (relist.go). After each run it measures
// the floor of the same cluster
// (floor.go): as many bare Pods and a cold mpirun, and, once, mpirun in a
// warm launcher.
// hack/measure-startup.sh runs it.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

type options struct {
	kubeconfig, image string
	workers, runs     int
	sshPort           int
	timeout           time.Duration
	floor             bool
}

func main() {
	var o options
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "/var/lib/mpi-operator-cluster/admin.conf", "kubeconfig of the local cluster")
	fs.StringVar(&o.image, "image", "mpi-operator.local/openmpi:e2e", "Open MPI image with /opt/mpi/ranks")
	fs.IntVar(&o.workers, "workers", 3, "workers (one rank each)")
	fs.IntVar(&o.runs, "runs", 5, "runs; the median is printed after them")
	fs.IntVar(&o.sshPort, "ssh-port", 22, "the workers' sshd port")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "longest a run may take")
	fs.BoolVar(&o.floor, "floor", true, "measure the floor too: after each run, N+1 bare Pods and a cold mpirun; after the last, mpirun in a warm launcher")
	_ = fs.Parse(os.Args[1:])
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = kubeflow.AddToScheme(scheme)
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	baseline, err := runningPods(context.Background(), cs)
	if err != nil {
		return err
	}
	var (
		all    []map[phase]time.Duration
		pods   []time.Duration
		cold   []time.Duration
		notice []time.Duration
	)
	for i := 1; i <= o.runs; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
		err := settle(ctx, cs, baseline)
		if err == nil {
			err = atOffset(ctx, i, o.runs)
		}
		var times map[phase]time.Duration
		if err == nil {
			times, err = once(ctx, cs, c, o, fmt.Sprintf("startup-%d-%d", o.workers, i))
		}
		line := summary(times)
		if err == nil {
			err = settle(ctx, cs, baseline)
		}
		if err == nil && o.floor {
			// Right after the job's run, so both see the machine alike.
			var t time.Duration
			if t, err = podsFloor(ctx, cs, o, fmt.Sprintf("floor-pods-%d-%d", o.workers, i), o.workers+1); err == nil {
				pods = append(pods, t)
				line += fmt.Sprintf("; floor: %d bare Pods started %.2fs", o.workers+1, t.Seconds())
				err = settle(ctx, cs, baseline)
			}
			if err == nil {
				if t, _, err = programFloor(ctx, cs, c, o, fmt.Sprintf("floor-cold-%d-%d", o.workers, i), 0); err == nil {
					cold = append(cold, t)
					line += fmt.Sprintf(", cold mpirun %.2fs", t.Seconds())
					err = settle(ctx, cs, baseline)
				}
			}
			if err == nil {
				err = atOffset(ctx, i, o.runs)
			}
			if err == nil {
				if t, err = exitNotice(ctx, cs, o.image, fmt.Sprintf("floor-exit-%d-%d", o.workers, i)); err == nil {
					notice = append(notice, t)
					line += fmt.Sprintf(", exit noticed %.2fs", t.Seconds())
					err = settle(ctx, cs, baseline)
				}
			}
		}
		cancel()
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		fmt.Printf("N=%d run %d: %s\n", o.workers, i, line)
		all = append(all, times)
	}
	printTable(o, all)
	if !o.floor {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	_, program, err := programFloor(ctx, cs, c, o, fmt.Sprintf("floor-program-%d", o.workers), o.runs)
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	var job jobEnds
	for _, times := range all {
		job.succeeded = append(job.succeeded, times[phaseSucceeded])
		if t, ok := times[phaseMpirunExited]; ok {
			job.mpirunExited = append(job.mpirunExited, t)
		}
	}
	printFloor(o, median(pods), job, program, cold, notice)
	return nil
}

// once runs one job in a namespace of its own and returns its phases.
func once(ctx context.Context, cs kubernetes.Interface, c client.WithWatch, o options, ns string) (map[phase]time.Duration, error) {
	if err := freshNamespace(ctx, cs, ns); err != nil {
		return nil, err
	}
	// The namespace goes when the run ends, its Pods with it, before the
	// next run starts: Pods stopping would compete with the next job's
	// for the node's CPU.
	defer gone(cs, ns)
	job := ranksJob(ns, o)
	start := time.Now()
	w := newPodWatch(start, o.sshPort)
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	if err := w.run(watchCtx, cs, ns); err != nil {
		return nil, err
	}
	// The watch's start is not the job's: the clock starts at the create.
	w.start = time.Now()
	if err := c.Create(ctx, job); err != nil {
		return nil, err
	}
	if err := waitSucceeded(ctx, c, job); err != nil {
		return nil, err
	}
	done := time.Since(w.start)
	times := w.times(o.workers)
	times[phaseSucceeded] = done
	marks, err := launcherMarks(ctx, cs, ns, w.launcherPod)
	if err != nil {
		return nil, err
	}
	for p, t := range marks {
		times[p] = t.Sub(w.start)
	}
	return times, nil
}

// waitSucceeded waits for job's Succeeded condition, and fails when the
// job fails. It watches rather than polls: a Get every 20 ms kept the API
// server, and this process, busy beside the job it measured.
func waitSucceeded(ctx context.Context, c client.WithWatch, job *kubeflow.MPIJob) error {
	w, err := c.Watch(ctx, &kubeflow.MPIJobList{}, client.InNamespace(job.Namespace),
		client.MatchingFields{"metadata.name": job.Name})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return fmt.Errorf("watch of MPIJob %s: %v", job.Name, ev.Object)
		}
		got, ok := ev.Object.(*kubeflow.MPIJob)
		if !ok {
			continue
		}
		for _, cond := range got.Status.Conditions {
			if cond.Status != corev1.ConditionTrue {
				continue
			}
			switch cond.Type {
			case kubeflow.JobSucceeded:
				return nil
			case kubeflow.JobFailed:
				return fmt.Errorf("job failed: %s", cond.Message)
			}
		}
	}
	return fmt.Errorf("watch of MPIJob %s ended: %w", job.Name, ctx.Err())
}

// ranksJob is hack/measure-startup.sh's job: /opt/mpi/ranks on one rank
// per worker, with upstream's defaults otherwise. The launcher's command
// prints a line before mpirun starts and one after it exits, so that the
// kubelet's log timestamps tell mpirun's own time from the wait before it
// and the kubelet's notice after it (at the cost of one shell more).
func ranksJob(ns string, o options) *kubeflow.MPIJob {
	job := testjob.MakeMPIJob("ranks", ns).Workers(int32(o.workers)).CleanPodPolicy(kubeflow.CleanPodPolicyAll).Obj()
	for rt, spec := range job.Spec.MPIReplicaSpecs {
		c := &spec.Template.Spec.Containers[0]
		c.Image, c.ImagePullPolicy = o.image, corev1.PullNever
		if rt == kubeflow.MPIReplicaTypeLauncher {
			c.Command = []string{"sh", "-c", fmt.Sprintf(`echo %s; %s; rc=$?; echo %s; exit $rc`,
				mpirunStartMark, mpirunCommand(o.workers), mpirunExitMark)}
		}
	}
	return job
}

// mpirunCommand runs the ranks, one per worker.
func mpirunCommand(workers int) string {
	return fmt.Sprintf("mpirun -n %d /opt/mpi/ranks", workers)
}

// The launcher's lines around mpirun (ranksJob).
const (
	mpirunStartMark = "MPIRUN-START"
	mpirunExitMark  = "MPIRUN-EXIT"
)

// launcherMarks are the kubelet's timestamps of the launcher's lines that
// end a phase: mpirun's start, rank 0's first line (printed after every
// rank joined), mpirun's exit.
func launcherMarks(ctx context.Context, cs kubernetes.Interface, ns, pod string) (map[phase]time.Time, error) {
	out := map[phase]time.Time{}
	if pod == "" {
		return out, nil
	}
	err := logLines(ctx, cs, ns, pod, "launcher", func(t time.Time, text string) {
		var p phase
		switch {
		case text == mpirunStartMark:
			p = phaseMpirunStarted
		case strings.HasPrefix(text, "RANK "):
			p = phaseFirstOutput
		case text == mpirunExitMark:
			p = phaseMpirunExited
		default:
			return
		}
		if _, seen := out[p]; !seen {
			out[p] = t
		}
	})
	return out, err
}

// logLines calls f with each line of a container's log and the kubelet's
// timestamp of it.
func logLines(ctx context.Context, cs kubernetes.Interface, ns, pod, container string, f func(t time.Time, text string)) error {
	stream, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, Timestamps: true}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("log of %s/%s: %w", pod, container, err)
	}
	defer func() { _ = stream.Close() }()
	sc := bufio.NewScanner(stream)
	for sc.Scan() {
		stamp, text, _ := strings.Cut(sc.Text(), " ")
		t, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			return fmt.Errorf("log of %s/%s: timestamp %q: %w", pod, container, stamp, err)
		}
		f(t, text)
	}
	return sc.Err()
}

// gone deletes namespace ns and waits, at most two minutes, until it is
// gone.
func gone(cs kubernetes.Interface, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// freshNamespace makes ns, waiting for an earlier one of that name to go.
func freshNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	return wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
			return false, nil
		}
		return err == nil, err
	})
}

func summary(times map[phase]time.Duration) string {
	var parts []string
	for _, p := range phases {
		if t, ok := times[p]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2fs", shortNames[p], t.Seconds()))
		}
	}
	return strings.Join(parts, ", ")
}

// printTable prints each phase's end, as the median over the runs, in the
// order they end, and how long after the one before it ended, in Markdown.
func printTable(o options, all []map[phase]time.Duration) {
	fmt.Printf("\nN=%d, median of %d runs (seconds from the MPIJob's create)\n\n", o.workers, len(all))
	fmt.Println("| phase ends | at | after the row before |")
	fmt.Println("| --- | --- | --- |")
	type row struct {
		p phase
		m time.Duration
	}
	var rows []row
	for _, p := range phases {
		var ts []time.Duration
		for _, times := range all {
			if t, ok := times[p]; ok {
				ts = append(ts, t)
			}
		}
		if len(ts) > 0 {
			rows = append(rows, row{p, median(ts)})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return int(a.m - b.m) })
	var prev time.Duration
	for _, r := range rows {
		fmt.Printf("| %s | %.2f | +%.2f |\n", r.p, r.m.Seconds(), (r.m - prev).Seconds())
		prev = r.m
	}
}

// jobEnds is when each run of the job ended, seen two ways: mpirun's exit
// (its launcher's line after it) and the MPIJob's Succeeded.
type jobEnds struct {
	mpirunExited, succeeded []time.Duration
}

// printFloor prints the floor's parts, the floors and the job's medians
// against each. Any Pod's exit is reported only at the kubelet's next
// relist, so the floor of apply→Succeeded holds a bare Pod's notice of its
// exit; the floors without it are the floors of mpirun's exit, and the job
// is set against them by its own mpirun's exit.
func printFloor(o options, pods time.Duration, job jobEnds, warm, cold, notice []time.Duration) {
	seconds := func(ts []time.Duration) string {
		var each []string
		for _, t := range ts {
			each = append(each, fmt.Sprintf("%.2f", t.Seconds()))
		}
		return strings.Join(each, ", ")
	}
	warmExit, coldExit := pods+median(warm), pods+median(cold)
	warmDone, coldDone := warmExit+median(notice), coldExit+median(notice)
	ratio := func(t, floor time.Duration) float64 { return t.Seconds() / floor.Seconds() }
	fmt.Printf("\nN=%d, the floor, medians of %d (seconds)\n\n", o.workers, o.runs)
	fmt.Println("| part | seconds |")
	fmt.Println("| --- | --- |")
	fmt.Printf("| %d bare Pods of the image, every container started | %.2f |\n", o.workers+1, pods.Seconds())
	fmt.Printf("| mpirun in a warm launcher, start to exit (%s) | %.2f |\n", seconds(warm), median(warm).Seconds())
	fmt.Printf("| mpirun cold: a fresh launcher's first, on fresh workers (%s) | %.2f |\n", seconds(cold), median(cold).Seconds())
	fmt.Printf("| a bare Pod's exit, from its last line to its status (%s) | %.2f |\n", seconds(notice), median(notice).Seconds())
	fmt.Printf("| floor of mpirun's exit, warm / cold mpirun | %.2f / %.2f |\n", warmExit.Seconds(), coldExit.Seconds())
	fmt.Printf("| **floor of apply→Succeeded, warm / cold mpirun** (with the exit's notice) | **%.2f / %.2f** |\n", warmDone.Seconds(), coldDone.Seconds())
	if len(job.mpirunExited) > 0 {
		m := median(job.mpirunExited)
		fmt.Printf("| the job's mpirun exited | %.2f: %.2f× / %.2f× the floor of mpirun's exit |\n", m.Seconds(), ratio(m, warmExit), ratio(m, coldExit))
	}
	s := median(job.succeeded)
	fmt.Printf("| MPIJob Succeeded | %.2f: **%.2f× / %.2f× the floor of apply→Succeeded** (%.2f× / %.2f× the floor of mpirun's exit) |\n",
		s.Seconds(), ratio(s, warmDone), ratio(s, coldDone), ratio(s, warmExit), ratio(s, coldExit))
}

func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
