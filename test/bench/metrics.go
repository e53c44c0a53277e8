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

// operatorCPU is the CPU time the operator has used so far, in seconds.
func operatorCPU(ctx context.Context) (float64, error) {
	var cpu float64
	err := readMetrics(ctx, func(line string) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "process_cpu_seconds_total" {
			cpu, _ = strconv.ParseFloat(f[1], 64)
		}
	})
	return cpu, err
}
