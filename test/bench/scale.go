package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// cleanup times, for a job that has Succeeded with cleanPodPolicy All, the
// removal of its worker Pods, then deletes the MPIJob and times the removal
// of every child: what a user of a 10,000-worker job waits for after it.
func (e *env) cleanup(ctx context.Context, job *kubeflow.MPIJob, pt *podTimes, res *startupResult) error {
	done := time.Now()
	if err := waitFor(ctx, "worker Pods removed by cleanPodPolicy All", func() bool {
		n, _ := pt.liveOf("worker")
		return n == 0
	}); err != nil {
		return err
	}
	_, last := pt.liveOf("worker")
	res.WorkersCleaned = max(last.Sub(done), 0)

	deleted := time.Now()
	if err := e.c.Delete(ctx, job); err != nil {
		return err
	}
	kids := []client.Object{
		&batchv1.Job{}, &corev1.Service{}, &corev1.ConfigMap{}, &corev1.Secret{},
	}
	names := []string{job.Name + "-launcher", job.Name, job.Name + "-config", job.Name + "-ssh"}
	err := waitFor(ctx, "the MPIJob's children removed", func() bool {
		if n, _ := pt.liveOf("*"); n > 0 {
			return false
		}
		for i, obj := range kids {
			err := e.c.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: names[i]}, obj)
			if !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	})
	res.ChildrenGone = time.Since(deleted)
	return err
}

// waitFor polls cond every 100 ms, for at most 10 minutes.
func waitFor(ctx context.Context, what string, cond func() bool) error {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("timed out waiting for %s", what)
}

// resetPeakRSS starts the operator's peak RSS (VmHWM) over from its
// current RSS (proc(5), clear_refs).
func resetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// peakRSS is the operator's peak RSS since the last reset, in MiB.
func peakRSS(pid int) (float64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// scaleTable prints, per job size, the start against the floor, the
// operator's CPU and peak memory, and the cleanup timings (medians over
// the runs), and how the CPU per worker grows from the smallest size.
func (r *report) scale(all []startupResult) {
	r.printf("\nOne MPIJob per size, cleanPodPolicy All, against the floor of N+1 bare Pods (medians)\n\n")
	r.printf("| N | MPIJob Running | floor | ratio | operator CPU | CPU per worker | CPU per worker / at N = %d | operator peak RSS | workers removed after Succeeded | children removed after the MPIJob's deletion |\n", sizesOf(all)[0])
	r.printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	var base float64
	for _, n := range sizesOf(all) {
		rows := runsOf(all, n)
		running := median(durations(rows, func(s startupResult) time.Duration { return s.JobRunning }))
		floor := median(durations(rows, func(s startupResult) time.Duration { return s.Floor }))
		var cpu, rss []float64
		for _, s := range rows {
			cpu, rss = append(cpu, s.CPUSeconds), append(rss, s.PeakRSSMiB)
		}
		perWorker := medianOf(cpu) / float64(n)
		if base == 0 {
			base = perWorker
		}
		r.printf("| %d | %s | %s | %.2f | %.2f s | %.2f ms | %.2f | %.1f MiB | %s | %s |\n", n, ms(running), ms(floor),
			float64(running)/float64(floor), medianOf(cpu), perWorker*1000, perWorker/base, medianOf(rss),
			ms(median(durations(rows, func(s startupResult) time.Duration { return s.WorkersCleaned }))),
			ms(median(durations(rows, func(s startupResult) time.Duration { return s.ChildrenGone }))))
	}
}
