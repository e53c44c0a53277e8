package main

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
)

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

// usage is what the operator has spent so far: CPU seconds, and
// reconciles of MPIJobs (whatever their result).
type usage struct{ cpu, reconciles float64 }

func (u usage) minus(v usage) usage { return usage{u.cpu - v.cpu, u.reconciles - v.reconciles} }

func operatorUsage(ctx context.Context) (usage, error) {
	var u usage
	err := readMetrics(ctx, func(line string) {
		f := strings.Fields(line)
		if len(f) != 2 {
			return
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch {
		case f[0] == "process_cpu_seconds_total":
			u.cpu = v
		case strings.HasPrefix(f[0], "controller_runtime_reconcile_total{") && strings.Contains(f[0], `controller="mpijob"`):
			u.reconciles += v
		}
	})
	return u, err
}
