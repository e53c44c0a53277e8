package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// requestCounts are the operator's own API requests by HTTP method, from
// client-go's rest_client_requests_total on the operator's metrics
// endpoint: nothing else (scheduler, kwok, the benchmark) is counted.
type requestCounts map[string]float64

var requestLine = regexp.MustCompile(`^rest_client_requests_total\{[^}]*method="([A-Z]+)"[^}]*\} ([0-9.e+]+)$`)

func scrapeRequests(ctx context.Context) (requestCounts, error) {
	counts := requestCounts{}
	err := readMetrics(ctx, func(line string) {
		if m := requestLine.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			counts[m[1]] += v
		}
	})
	return counts, err
}

// readMetrics calls fn with each line of the operator's metrics.
func readMetrics(ctx context.Context, fn func(line string)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:18080/metrics", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
	return sc.Err()
}

func (c requestCounts) minus(o requestCounts) requestCounts {
	out := requestCounts{}
	for k, v := range c {
		out[k] = v - o[k]
	}
	return out
}

func (c requestCounts) writes() float64 {
	return c["POST"] + c["PUT"] + c["PATCH"] + c["DELETE"]
}

// statusWrites counts the writes of an MPIJob's status while ctx lives:
// every modification that leaves the generation (the spec) unchanged.
func statusWrites(ctx context.Context, c client.WithWatch, job *kubeflow.MPIJob) (func() int, error) {
	w, err := c.Watch(ctx, &kubeflow.MPIJobList{}, client.InNamespace(job.Namespace))
	if err != nil {
		return nil, fmt.Errorf("watching MPIJobs: %w", err)
	}
	done := make(chan int, 1)
	go func() {
		n := 0
		defer func() { done <- n }()
		for ev := range w.ResultChan() {
			if ev.Type == watch.Modified {
				n++
			}
		}
	}()
	return func() int {
		w.Stop()
		return <-done
	}, nil
}
