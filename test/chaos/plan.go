package main

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// namespace holds every MPIJob of the run.
const namespace = "chaos"

// The labels and annotation hack/bench/launcher-exit.yaml reads on a
// launcher Pod: how long the simulated mpirun runs, its exit code, and
// whether it lost a rank.
const (
	labelExitCode = "bench.mpi-operator/exit-code"
	annotationRun = "bench.mpi-operator/run-for"
	// labelLostRank makes the launcher fail at once: mpirun lost a rank.
	labelLostRank = "bench.mpi-operator/lost-rank"
)

// plannedJob is one MPIJob of the run and what must become of it.
type plannedJob struct {
	name    string
	workers int32
	// at is when it is created, after the first.
	at      time.Duration
	run     time.Duration
	fails   bool
	backoff int32
}

// want is the job's right final state.
func (p plannedJob) want() kubeflow.JobConditionType {
	if p.fails {
		return kubeflow.JobFailed
	}
	return kubeflow.JobSucceeded
}

// plan draws the run's jobs from the seed. Sizes are mixed: mostly 1 to
// 16 workers, some 32 or 64, and one big job. One job in failEvery is made
// to fail. A job that succeeds gets backoffLimit 0 mostly: then a single
// lost worker counted against it would fail it, so its final state proves
// the restart gave the retries back. A job made to fail gets 0 or 1.
func plan(o options, rng *rand.Rand) []plannedJob {
	small := []int32{1, 2, 2, 4, 4, 4, 8, 8, 8, 16, 16, 32, 64}
	jobs := make([]plannedJob, o.jobs)
	for i := range jobs {
		j := plannedJob{name: fmt.Sprintf("c%03d", i), workers: small[rng.IntN(len(small))]}
		if i > 0 {
			j.at = time.Duration(rng.Int64N(int64(o.createOver)))
		}
		j.run = o.runMin + time.Duration(rng.Int64N(int64(o.runMax-o.runMin)+1))
		j.run = j.run.Round(time.Second)
		if o.failEvery > 0 && rng.IntN(o.failEvery) == 0 {
			j.fails = true
			j.backoff = rng.Int32N(2)
		} else if rng.IntN(4) == 0 {
			j.backoff = 1 + rng.Int32N(3)
		}
		jobs[i] = j
	}
	// The big job comes early, so its life overlaps every kind of chaos,
	// and it succeeds.
	big := &jobs[min(1, len(jobs)-1)]
	big.workers, big.fails, big.backoff, big.run = int32(o.bigWorkers), false, 0, o.runMax
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].at < jobs[b].at })
	return jobs
}

// mpiJob is the MPIJob of a planned job. The launcher's template tells
// kwok how its Pod ends.
func (p plannedJob) mpiJob() *kubeflow.MPIJob {
	code := "0"
	if p.fails {
		code = "1"
	}
	pod := func() corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers:                   []corev1.Container{{Name: "c", Image: "bench"}},
			AutomountServiceAccountToken: ptr.To(false),
		}}
	}
	launcher := pod()
	launcher.Labels = map[string]string{labelExitCode: code}
	launcher.Annotations = map[string]string{annotationRun: strconv.Itoa(int(p.run.Seconds())) + "s"}
	return &kubeflow.MPIJob{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: namespace},
		Spec: kubeflow.MPIJobSpec{
			RunPolicy: kubeflow.RunPolicy{BackoffLimit: ptr.To(p.backoff)},
			MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
				kubeflow.MPIReplicaTypeLauncher: {Replicas: ptr.To[int32](1), Template: launcher},
				kubeflow.MPIReplicaTypeWorker:   {Replicas: ptr.To(p.workers), Template: pod()},
			},
		},
	}
}
