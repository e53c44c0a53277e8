package main

// The floor of a job's apply→Succeeded on this cluster, measured in the
// same session as the job, from two parts that no operator can shorten:
//
//   - the Pods: N+1 bare Pods of the job's image (as many as the job's
//     workers and launcher, with no volume and no init container), made at
//     once by this process, until the kubelets report every container
//     started;
//   - the program: mpirun of the same ranks, from its start to its exit,
//     timed warm (inside a launcher whose workers' sshd already served one
//     run) and cold (the first run of a fresh launcher on fresh workers).
//
// Pods plus a warm run is a lower bound: the ranks cannot start before the
// containers, and Succeeded cannot come before mpirun exits. Pods plus a
// cold run is what any operator that starts a fresh launcher and fresh
// workers per job pays; what is between the two is the first connection's
// own cost (sshd's first fork, the libraries read from disk). Both are
// floors of mpirun's exit. Every Pod adds one more part after that, the
// kubelet's notice of its exit, which exitnotice.go measures: the floor of
// apply→Succeeded is each of the two with a bare Pod's notice added.

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// floorLine prefixes each timed run's nanoseconds in the floor launcher's
// output.
const floorLine = "FLOOR_NS "

// podsFloor makes n bare Pods of the job's image in namespace ns and
// returns how long after the first create the last container started, as
// this process's watch saw it.
func podsFloor(ctx context.Context, cs kubernetes.Interface, o options, ns string, n int) (time.Duration, error) {
	if err := freshNamespace(ctx, cs, ns); err != nil {
		return 0, err
	}
	defer gone(cs, ns)
	var (
		mu      sync.Mutex
		start   time.Time
		started = map[string]time.Duration{}
	)
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	record := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || !running(pod.Status.ContainerStatuses) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, seen := started[pod.Name]; !seen {
			started[pod.Name] = time.Since(start)
		}
	}
	if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    record,
		UpdateFunc: func(_, obj any) { record(obj) },
	}); err != nil {
		return 0, err
	}
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	f.Start(watchCtx.Done())
	f.WaitForCacheSync(watchCtx.Done())

	mu.Lock()
	start = time.Now()
	mu.Unlock()
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := cs.CoreV1().Pods(ns).Create(ctx, barePod(o.image, i), metav1.CreateOptions{})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			return 0, fmt.Errorf("bare Pod: %w", err)
		}
	}
	var last time.Duration
	err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(started) < n {
			return false, nil
		}
		for _, t := range started {
			last = max(last, t)
		}
		return true, nil
	})
	return last, err
}

// barePod is the floor's Pod: the job's image doing nothing, stopped at
// once when its namespace goes.
func barePod(image string, i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bare-%d", i)},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{
				Name: "bare", Image: image, ImagePullPolicy: corev1.PullNever,
				Command: []string{"sleep", "3600"},
			}},
		},
	}
}

// coldLine prefixes the nanoseconds of the floor launcher's first run.
const coldLine = "COLD_NS "

// programFloor runs the job's ranks 1+warm times in one fresh launcher,
// on fresh workers, and returns the first run's time (cold: the workers'
// sshd never served a connection, the launcher never ran mpirun, the MPI
// libraries were never read in this Pod) and the warm runs' times (the
// workers' sshd and the page cache warm, as a second job on the same
// nodes finds them).
func programFloor(ctx context.Context, cs kubernetes.Interface, c client.WithWatch, o options, ns string, warm int) (time.Duration, []time.Duration, error) {
	if err := freshNamespace(ctx, cs, ns); err != nil {
		return 0, nil, err
	}
	defer gone(cs, ns)
	job := ranksJob(ns, o)
	launcher := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher]
	mpirun := mpirunCommand(o.workers)
	launcher.Template.Spec.Containers[0].Command = []string{"bash", "-c", fmt.Sprintf(
		`s=$(date +%%s%%N); %[1]s >/dev/null || exit 1; e=$(date +%%s%%N)
echo "%[4]s$((e - s))"
for i in $(seq %[2]d); do
  s=$(date +%%s%%N); %[1]s >/dev/null || exit 1; e=$(date +%%s%%N)
  echo "%[3]s$((e - s))"
done`, mpirun, warm, floorLine, coldLine)}
	if err := c.Create(ctx, job); err != nil {
		return 0, nil, err
	}
	if err := waitSucceeded(ctx, c, job); err != nil {
		return 0, nil, err
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
		LabelSelector: kubeflow.LabelJobRole + "=" + builder.RoleLauncher,
	})
	if err != nil || len(pods.Items) == 0 {
		return 0, nil, fmt.Errorf("floor launcher Pod: %d found: %w", len(pods.Items), err)
	}
	stream, err := cs.CoreV1().Pods(ns).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{Container: "launcher"}).Stream(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("floor launcher log: %w", err)
	}
	defer func() { _ = stream.Close() }()
	var cold time.Duration
	var out []time.Duration
	sc := bufio.NewScanner(stream)
	for sc.Scan() {
		for _, prefix := range []string{coldLine, floorLine} {
			nanos, ok := strings.CutPrefix(sc.Text(), prefix)
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(nanos, 10, 64)
			if err != nil {
				return 0, nil, fmt.Errorf("floor launcher line %q: %w", sc.Text(), err)
			}
			if prefix == coldLine {
				cold = time.Duration(n)
			} else {
				out = append(out, time.Duration(n))
			}
		}
	}
	if cold == 0 || len(out) != warm {
		return 0, nil, fmt.Errorf("floor launcher printed a cold run %v and %d warm ones, want %d", cold, len(out), warm)
	}
	return cold, out, sc.Err()
}
