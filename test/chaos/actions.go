package main

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// actionStats counts what the chaos did to the jobs.
type actionStats struct {
	mu                 sync.Mutex
	Deleted, Evicted   int
	Suspended, Resumed int
	Failed             int
	// lostWhileRunning are the jobs that lost a worker while their
	// launcher Pod was Running: each must have restarted, with its
	// retries kept.
	lostWhileRunning map[string]bool
}

// chaos takes one action every o.actionEvery until its budget is spent or
// ctx ends: delete a worker Pod, evict one (Eviction API, as a drain
// does), or suspend a job and resume it 3 to 12 s later. A worker is taken
// preferably from a job whose launcher Pod is Running, so the loss ends a
// running attempt; the simulated mpirun then fails (loseRank). The
// resumes and the rank losses run on resumeCtx, which outlives ctx, so a
// job is never left suspended; wg waits for them.
func chaos(ctx, resumeCtx context.Context, e *env, ob *observer, rng *rand.Rand, big string, wg *sync.WaitGroup) *actionStats {
	st := &actionStats{lostWhileRunning: map[string]bool{}}
	left := map[string]int{"delete": e.o.deletes, "evict": e.o.evictions, "suspend": e.o.suspends}
	tick := time.NewTicker(e.o.actionEvery)
	defer tick.Stop()
	for left["delete"]+left["evict"]+left["suspend"] > 0 {
		select {
		case <-ctx.Done():
			return st
		case <-tick.C:
		}
		var kinds []string
		for _, k := range []string{"delete", "evict", "suspend"} {
			if left[k] > 0 {
				kinds = append(kinds, k)
			}
		}
		kind := kinds[rng.IntN(len(kinds))]
		s, err := ob.snapshot(ctx)
		if err != nil {
			continue
		}
		switch kind {
		case "delete", "evict":
			pod, launcher := pickWorker(s, rng)
			running := launcher != nil
			if pod == nil {
				continue
			}
			left[kind]--
			var err error
			if kind == "delete" {
				err = e.cs.CoreV1().Pods(namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
					Preconditions: &metav1.Preconditions{UID: ptr.To(pod.UID)}})
			} else {
				err = e.cs.PolicyV1().Evictions(namespace).Evict(ctx, &policyv1.Eviction{
					ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: namespace},
					DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(pod.UID)}}})
			}
			during := ""
			if running {
				during = ", its launcher " + launcher.Name + " Running"
			}
			logf("%s %s%s: %v", kind, pod.Name, during, errText(err))
			st.mu.Lock()
			switch {
			case err != nil:
				st.Failed++
			case kind == "delete":
				st.Deleted++
			default:
				st.Evicted++
			}
			if err == nil && running {
				st.lostWhileRunning[pod.Labels[kubeflow.LabelJobName]] = true
			}
			st.mu.Unlock()
			if err == nil && running {
				wg.Go(func() { loseRank(resumeCtx, e, launcher) })
			}
		case "suspend":
			job := pickJob(s, rng, big)
			if job == nil {
				continue
			}
			left[kind]--
			err := setSuspend(ctx, e, job.Name, true)
			logf("suspend %s: %v", job.Name, errText(err))
			if err != nil {
				st.mu.Lock()
				st.Failed++
				st.mu.Unlock()
				continue
			}
			st.mu.Lock()
			st.Suspended++
			st.mu.Unlock()
			after := 3*time.Second + time.Duration(rng.Int64N(int64(9*time.Second)))
			wg.Go(func() {
				select {
				case <-resumeCtx.Done():
					return
				case <-time.After(after):
				}
				// Retried, bounded: the API server may be restarting.
				for range 60 {
					if setSuspend(resumeCtx, e, job.Name, false) == nil {
						st.mu.Lock()
						st.Resumed++
						st.mu.Unlock()
						return
					}
					select {
					case <-resumeCtx.Done():
						return
					case <-time.After(time.Second):
					}
				}
			})
		}
	}
	return st
}

// pickWorker picks a live worker Pod, from a job whose launcher Pod is
// Running when there is one; it returns that launcher Pod too.
func pickWorker(s snapshot, rng *rand.Rand) (*corev1.Pod, *corev1.Pod) {
	var all, running []*corev1.Pod
	launchers := map[string]*corev1.Pod{}
	for _, job := range sortedJobs(s) {
		if final(job) != "" {
			continue
		}
		pods := s.pods[job.Name]
		var launcher *corev1.Pod
		for _, p := range pods {
			if p.Labels[kubeflow.LabelJobRole] == "launcher" && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				launcher = p
			}
		}
		for _, p := range pods {
			if p.Labels[kubeflow.LabelJobRole] != "worker" || p.DeletionTimestamp != nil {
				continue
			}
			all = append(all, p)
			if launcher != nil {
				running = append(running, p)
				launchers[p.Name] = launcher
			}
		}
	}
	if len(running) > 0 {
		p := running[rng.IntN(len(running))]
		return p, launchers[p.Name]
	}
	if len(all) > 0 {
		return all[rng.IntN(len(all))], nil
	}
	return nil, nil
}

// rankLossExit is how long the simulated mpirun runs on after one of its
// workers is lost: a real one loses the SSH connection to the rank and
// exits with an error within seconds.
const rankLossExit = 2 * time.Second

// loseRank plays mpirun losing a rank: unless the operator has ended the
// attempt first (the launcher Pod is gone or stopping), the launcher Pod is
// labelled and kwok's launcher-lost-rank stage fails it with exit code 1
// (hack/bench/launcher-exit.yaml says why kwok, not this program, writes
// the failure). The operator must then still count the failure as the
// lost worker's, not the program's (design §4.3).
func loseRank(ctx context.Context, e *env, launcher *corev1.Pod) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(rankLossExit):
	}
	patch := []byte(`{"metadata":{"labels":{"` + labelLostRank + `":"true"}}}`)
	for range 5 {
		p, err := e.cs.CoreV1().Pods(namespace).Get(ctx, launcher.Name, metav1.GetOptions{})
		if err != nil || p.UID != launcher.UID || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			return
		}
		if _, err := e.cs.CoreV1().Pods(namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err == nil {
			logf("launcher Pod %s fails: it lost a rank %s ago", p.Name, rankLossExit)
			return
		}
	}
}

// pickJob picks a job that is neither final nor suspended; not the big
// one, whose thousand Pods would dominate the run.
func pickJob(s snapshot, rng *rand.Rand, big string) *kubeflow.MPIJob {
	var out []*kubeflow.MPIJob
	for _, job := range sortedJobs(s) {
		if final(job) == "" && job.Name != big && !ptr.Deref(job.Spec.RunPolicy.Suspend, false) {
			out = append(out, job)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out[rng.IntN(len(out))]
}

// sortedJobs orders the snapshot's jobs by name, so that the same seed
// makes the same choices from the same state.
func sortedJobs(s snapshot) []*kubeflow.MPIJob {
	out := append([]*kubeflow.MPIJob(nil), s.jobs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func setSuspend(ctx context.Context, e *env, name string, suspend bool) error {
	patch := []byte(`{"spec":{"runPolicy":{"suspend":false}}}`)
	if suspend {
		patch = []byte(`{"spec":{"runPolicy":{"suspend":true}}}`)
	}
	job := &kubeflow.MPIJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	return e.c.Patch(ctx, job, rawMerge(patch))
}

func rawMerge(patch []byte) client.Patch { return client.RawPatch(types.MergePatchType, patch) }

func errText(err error) string {
	if err == nil {
		return "done"
	}
	return err.Error()
}
