//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// TestExampleElastic runs examples/v2beta1/elastic/pi.yaml. It starts with
// one worker, and its launcher runs pi over it. Scaled to two workers
// through the scale subresource (what kubectl scale uses), the job's
// hostfile and discover_hosts.sh list both; the same launcher, not
// restarted, sees them in a later round and the job ends after a round of
// pi with a rank on each worker.
func TestExampleElastic(t *testing.T) {
	exampleTest(t)
	job := exampleJob(t, "elastic/pi.yaml")
	waitRound(t, job, "a round of pi on 1 worker", func(r piRound) bool { return r.workers == 1 && r.pi })
	if hostfile, discovered := configHosts(t, job); len(hostfile) != 1 || len(discovered) != 1 {
		t.Fatalf("before the scale: hostfile %v, discover_hosts.sh %v, want 1 host each", hostfile, discovered)
	}

	scaleWorkers(t, job, 1, 2)
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, jobTimeout, true, func(context.Context) (bool, error) {
		hostfile, discovered := configHosts(t, job)
		return len(hostfile) == 2 && len(discovered) == 2, nil
	})
	if err != nil {
		hostfile, discovered := configHosts(t, job)
		t.Fatalf("after the scale to 2: hostfile %v, discover_hosts.sh %v, want 2 hosts each", hostfile, discovered)
	}

	out := expectSucceeded(t, job)
	rounds := piRounds(out)
	last := rounds[len(rounds)-1]
	want := []string{job.Name + "-worker-0", job.Name + "-worker-1"}
	if last.workers != 2 || !last.pi || !slices.Equal(last.rankHosts(), want) {
		t.Errorf("last round: %d workers, pi %t, ranks on %v; want 2 workers, pi, ranks on %v", last.workers, last.pi, last.rankHosts(), want)
	}
	if n := len(launcherPods(t, job)); n != 1 {
		t.Errorf("%d launcher Pods, want 1: the scale restarted the launcher", n)
	}
}

// scaleWorkers changes the job's worker count through the scale
// subresource, checking that it reads the count it had.
func scaleWorkers(t *testing.T, job *kubeflow.MPIJob, from, to int32) {
	t.Helper()
	ctx := context.Background()
	scale := &autoscalingv1.Scale{}
	if err := k8s.SubResource("scale").Get(ctx, job, scale); err != nil {
		t.Fatalf("reading the scale subresource: %v", err)
	}
	if scale.Spec.Replicas != from || scale.Status.Selector == "" {
		t.Errorf("scale: spec.replicas %d, selector %q; want %d and the workers' selector", scale.Spec.Replicas, scale.Status.Selector, from)
	}
	scale.Spec.Replicas = to
	if err := k8s.SubResource("scale").Update(ctx, job, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("scaling to %d workers: %v", to, err)
	}
}

// configHosts returns the hosts of the job's hostfile and those its
// discover_hosts.sh prints.
func configHosts(t *testing.T, job *kubeflow.MPIJob) (hostfile, discovered []string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: job.Namespace, Name: builder.ConfigMapName(job)}, cm); err != nil {
		t.Fatal(err)
	}
	return builder.HostfileHosts(cm.Data[builder.HostfileKey]), builder.DiscoveredHosts(cm.Data[builder.DiscoverHostsKey])
}

// waitRound waits until the launcher's output has a round that done
// accepts.
func waitRound(t *testing.T, job *kubeflow.MPIJob, what string, done func(piRound) bool) {
	t.Helper()
	var out string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, jobTimeout, true, func(ctx context.Context) (bool, error) {
		out = launcherLogs(t, job)
		got := &kubeflow.MPIJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), got); err == nil && (isTrue(got, kubeflow.JobSucceeded) || isTrue(got, kubeflow.JobFailed)) {
			return false, fmt.Errorf("the job finished first")
		}
		return slices.ContainsFunc(piRounds(out), done), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v\nlauncher output:\n%s", what, err, out)
	}
}

// piRound is one round of the elastic example's launcher: how many
// workers discover_hosts.sh listed, and what pi printed over them.
type piRound struct {
	workers  int
	reported int // pi's "Workers: N"
	ranks    map[int]string
	piLine   bool
	pi       bool
}

// rankHosts lists the host of each rank, in rank order.
func (r piRound) rankHosts() []string {
	var out []string
	for i := range len(r.ranks) {
		out = append(out, r.ranks[i])
	}
	return out
}

var roundLine = regexp.MustCompile(`^round \d+: (\d+) worker\(s\):`)

// piRounds parses the elastic launcher's output into its rounds. A round
// ran pi when pi printed its value, counted as many ranks as the round had
// workers, and each of them reported its host. (The ranks' lines come
// through different workers and may follow the value.)
func piRounds(out string) []piRound {
	var rounds []piRound
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if m := roundLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			rounds = append(rounds, piRound{workers: n, reported: -1, ranks: map[int]string{}})
			continue
		}
		if len(rounds) == 0 {
			continue
		}
		r := &rounds[len(rounds)-1]
		if w, ok := strings.CutPrefix(line, "Workers: "); ok {
			r.reported, _ = strconv.Atoi(w)
		}
		if m := piRankLine.FindStringSubmatch(line); m != nil {
			i, _ := strconv.Atoi(m[1])
			r.ranks[i] = m[2]
		}
		if strings.HasPrefix(line, "pi is approximately 3.14") {
			r.piLine = true
		}
	}
	for i := range rounds {
		r := &rounds[i]
		r.pi = r.piLine && r.reported == r.workers && len(r.ranks) == r.workers
	}
	return rounds
}
