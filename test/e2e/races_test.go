//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// raceImage, when E2E_OPERATOR_IMAGE names it, is the operator image built
// with -race (hack/cluster/race-image.sh) that the suite runs instead of
// the release's: the real concurrency of every test then looks for data
// races, and a race reported fails the run.
var raceImage = os.Getenv("E2E_OPERATOR_IMAGE")

// raceMark opens every report of Go's race detector.
const raceMark = "WARNING: DATA RACE"

// raceWatch follows the log of every operator container while the suite
// runs and counts the race reports in them. A Pod the tests replace (a
// rollout, a failover) takes its log with it, so logs are read as they
// are written, not at the end.
type raceWatch struct {
	mu sync.Mutex
	// reports counts the race reports by container (Pod/container/restart).
	reports map[string]int
	wg      sync.WaitGroup
}

// watchRaces follows the operator's containers until ctx ends.
func watchRaces(ctx context.Context) *raceWatch {
	w := &raceWatch{reports: map[string]int{}}
	w.wg.Go(func() {
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			w.followNew(ctx)
			return false, nil
		})
	})
	return w
}

// followNew starts following each operator container not yet followed:
// one per Pod and restart.
func (w *raceWatch) followNew(ctx context.Context) {
	for key, c := range runningContainers(ctx) {
		w.mu.Lock()
		_, seen := w.reports[key]
		if !seen {
			w.reports[key] = 0
		}
		w.mu.Unlock()
		if !seen {
			w.wg.Go(func() { w.read(ctx, key, c, true) })
		}
	}
}

// operatorContainer is a running container of an operator Pod.
type operatorContainer struct{ pod, name string }

// runningContainers are the operator's running containers, by
// Pod/container/restart.
func runningContainers(ctx context.Context) map[string]operatorContainer {
	out := map[string]operatorContainer{}
	pods, err := clientset.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return out
	}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running != nil {
				out[fmt.Sprintf("%s/%s/%d", p.Name, cs.Name, cs.RestartCount)] = operatorContainer{p.Name, cs.Name}
			}
		}
	}
	return out
}

// read counts the race reports in a container's log, following it until
// the container ends when follow is set.
func (w *raceWatch) read(ctx context.Context, key string, c operatorContainer, follow bool) {
	s, err := clientset.CoreV1().Pods(operatorNamespace).GetLogs(c.pod, &corev1.PodLogOptions{Container: c.name, Follow: follow}).Stream(ctx)
	if err != nil {
		return
	}
	defer func() { _ = s.Close() }()
	sc := bufio.NewScanner(s)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	n := 0
	for sc.Scan() {
		if strings.Contains(sc.Text(), raceMark) {
			n++
			w.mu.Lock()
			w.reports[key] = max(w.reports[key], n)
			w.mu.Unlock()
		}
	}
}

// stop ends the followers (cancel is watchRaces' ctx's), reads the whole
// log of each container still running, which holds every report up to
// now, and returns the reports by container.
func (w *raceWatch) stop(cancel context.CancelFunc) map[string]int {
	cancel()
	w.wg.Wait()
	ctx := context.Background()
	for key, c := range runningContainers(ctx) {
		w.read(ctx, key, c, false)
	}
	return w.reports
}

// setOperatorImage makes the operator's Deployment run image, and waits
// until a Pod running it leads.
func setOperatorImage(ctx context.Context, image string) error {
	key := client.ObjectKey{Namespace: operatorNamespace, Name: operatorName}
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := k8s.Get(ctx, key, d); err != nil {
			return false, nil
		}
		if d.Spec.Template.Spec.Containers[0].Image == image {
			return true, nil
		}
		d.Spec.Template.Spec.Containers[0].Image = image
		return k8s.Update(ctx, d) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("setting the operator's image to %s: %w", image, err)
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		lease := &coordinationv1.Lease{}
		if err := k8s.Get(ctx, key, lease); err != nil || lease.Spec.HolderIdentity == nil {
			return false, nil
		}
		holder, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
		p := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: holder}, p); err != nil {
			return false, nil
		}
		return p.DeletionTimestamp == nil && p.Spec.Containers[0].Image == image && isPodReady(p), nil
	})
}

func isPodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// runWithRaceImage runs the suite on the -race operator, and fails it when
// an operator container reported a race.
func runWithRaceImage(run func() int) int {
	ctx := context.Background()
	if err := setOperatorImage(ctx, raceImage); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	watchCtx, cancel := context.WithCancel(ctx)
	w := watchRaces(watchCtx)
	code := run()
	total := 0
	for key, n := range w.stop(cancel) {
		if n > 0 {
			fmt.Printf("%d race reports in the log of %s\n", n, key)
		}
		total += n
	}
	fmt.Printf("data races the operator Pods reported: %d (operator image %s)\n", total, raceImage)
	if total > 0 {
		return 1
	}
	return code
}
