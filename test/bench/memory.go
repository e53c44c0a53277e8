package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

// memorySample is the operator's memory with some objects in the cluster.
type memorySample struct {
	What      string  `json:"what"`
	RSSMiB    float64 `json:"rssMiB"`
	HeapMiB   float64 `json:"heapInuseMiB"`
	Unrelated int     `json:"unrelatedPods"`
	Jobs      int     `json:"mpiJobs"`
}

// memory samples the operator's RSS and Go heap with 0 and more unrelated
// Pods (not ours: the cache must not hold them) and then with idle MPIJobs.
func (e *env) memory(ctx context.Context, noise []int, jobs int) ([]memorySample, error) {
	var out []memorySample
	created := 0
	if err := newNamespace(ctx, e.cs, "noise"); err != nil {
		return nil, err
	}
	for _, n := range noise {
		// Bound to a node that does not exist: nothing schedules or runs
		// them, they only exist, as other tenants' Pods do.
		err := benchcluster.Parallel(n-created, 100, func(i int) error {
			p := benchPod("noise", fmt.Sprintf("noise-%d", created+i))
			p.Spec.NodeName = "elsewhere"
			_, err := e.cs.CoreV1().Pods("noise").Create(ctx, p, metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return out, fmt.Errorf("creating unrelated Pods: %w", err)
		}
		created = n
		s, err := e.sample(ctx, fmt.Sprintf("%d unrelated Pods", n))
		if err != nil {
			return out, err
		}
		s.Unrelated = n
		out = append(out, s)
	}
	if jobs > 0 {
		if err := newNamespace(ctx, e.cs, "idle-jobs"); err != nil {
			return out, err
		}
		err := benchcluster.Parallel(jobs, 50, func(i int) error {
			job := benchJob("idle-jobs", 8)
			job.Name = fmt.Sprintf("idle-%d", i)
			job.Spec.RunPolicy.Suspend = ptr.To(true)
			return e.c.Create(ctx, job)
		})
		if err != nil {
			return out, fmt.Errorf("creating MPIJobs: %w", err)
		}
		s, err := e.sample(ctx, fmt.Sprintf("%d suspended MPIJobs (+ %d unrelated Pods)", jobs, created))
		if err != nil {
			return out, err
		}
		s.Unrelated, s.Jobs = created, jobs
		out = append(out, s)
	}
	return out, nil
}

// sample waits for the operator to settle and reads its memory.
func (e *env) sample(ctx context.Context, what string) (memorySample, error) {
	time.Sleep(10 * time.Second)
	s := memorySample{What: what}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.operatorPID))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			s.RSSMiB = kb / 1024
		}
	}
	err = readMetrics(ctx, func(line string) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "go_memstats_heap_inuse_bytes" {
			b, _ := strconv.ParseFloat(f[1], 64)
			s.HeapMiB = b / (1 << 20)
		}
	})
	return s, err
}
