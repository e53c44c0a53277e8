package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// apiRequests are the API server's requests of everyone (its
// apiserver_request_total), by verb and resource, watches excluded.
type apiRequests map[string]float64

// readAPIRequests reads the API server's request counts.
func readAPIRequests(ctx context.Context, cs *kubernetes.Clientset) (apiRequests, error) {
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := apiRequests{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		labels := map[string]string{}
		for _, kv := range strings.Split(line[len("apiserver_request_total{"):strings.LastIndexByte(line, '}')], ",") {
			k, val, _ := strings.Cut(kv, "=")
			labels[k] = strings.Trim(val, `"`)
		}
		if labels["verb"] == "WATCH" || labels["resource"] == "" {
			continue
		}
		key := labels["verb"] + " " + labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		out[key] += v
	}
	return out, nil
}

// printDelta prints the requests made between two readings, most first.
func printDelta(what string, before, after apiRequests) {
	type kv struct {
		k string
		n float64
	}
	var rows []kv
	total := 0.0
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			rows = append(rows, kv{k, d})
			total += d
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].n > rows[j].n })
	fmt.Printf("  API server requests, %s: %.0f in all\n", what, total)
	for i, r := range rows {
		if i == 12 {
			break
		}
		fmt.Printf("    %6.0f  %s\n", r.n, r.k)
	}
}

// requestsSince reads the API server's request counts now, with
// -timeline, and returns what prints the requests made since; without
// -timeline it reads nothing and prints nothing.
func (e *env) requestsSince(ctx context.Context) (func(what string) error, error) {
	if !e.o.timeline {
		return func(string) error { return nil }, nil
	}
	before, err := readAPIRequests(ctx, e.cs)
	if err != nil {
		return nil, err
	}
	return func(what string) error {
		after, err := readAPIRequests(ctx, e.cs)
		if err != nil {
			return err
		}
		printDelta(what, before, after)
		return nil
	}, nil
}
