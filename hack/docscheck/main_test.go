package main

import "testing"

func TestFindsDatesTimesOfDayAndCommitHashesOnly(t *testing.T) {
	cases := map[string]struct {
		line string
		hit  bool
	}{
		"ISO date":                  {"In the latest run (2026-12-05) it took", true},
		"ISO date and time":         {"at 2026-12-05T20:36:00Z", true},
		"day month year":            {"measured on 5 Dec 2026", true},
		"full month":                {"measured on 5 December 2026.", true},
		"month day, year":           {"measured on December 5, 2026", true},
		"month and year":            {"since March 2026", true},
		"time of day":               {"the run at 20:36 took", true},
		"time of day UTC":           {"(20:36 UTC)", true},
		"time range":                {"medians of 5 at 19:42–19:53", true},
		"time with seconds":         {">> [17:04:39] applying", true},
		"short hash":                {"main at 4b700ea: workers", true},
		"hash in parentheses":       {"(d95da0b)", true},
		"full hash":                 {"commit 0ed986f2a4b1c3d5e6f708192a3b4c5d6e7f8091", true},
		"duration":                  {"took 1 min 53 s, then 25 min 48 s", false},
		"ratio":                     {"a ratio of 1.20, then 1.34×", false},
		"version":                   {"Kubernetes v1.37.2, Helm v4.3.2, kwok v0.8.0", false},
		"port":                      {"`--metrics-bind-address` (`:8080`)", false},
		"host and port":             {"a registry on 127.0.0.1:15000", false},
		"image tag":                 {"FROM debian:12 and mpioperator/mpi-pi:openmpi", false},
		"hostfile line":             {"elastic-worker-0.elastic:1", false},
		"number":                    {"a hostfile of 994,433 bytes, 1044571 in all", false},
		"hex word without digits":   {"deadbeef and facade", false},
		"UUID":                      {"uid: 3f2504e0-4f89-11d3-9a0c-0305e82c3301", false},
		"issue number":              {"upstream #842, pmodels/mpich#6596", false},
		"sha256 digest":             {"sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", false},
		"May as a verb":             {"a job may take 2000 workers", false},
		"duration in Go notation":   {"3m32.574s against 1m31.842s", false},
		"word with hex and letters": {"e2e and sha256 and mpiuser", false},
		"key type":                  {"the key is ed25519", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := findings(tc.line)
			if hit := len(got) > 0; hit != tc.hit {
				t.Errorf("findings(%q) = %q; want a hit: %v", tc.line, got, tc.hit)
			}
		})
	}
}
