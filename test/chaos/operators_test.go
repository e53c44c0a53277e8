package main

import (
	"strings"
	"testing"
)

// A leader's kill is timed from its first reconcile and from when it
// caught up, read from the mpijob controller's reconcile counter and queue
// depth: the other controllers' and a follower's do not count.
func TestMetricsStateReadsLeadershipAndReconciles(t *testing.T) {
	for _, tc := range []struct {
		name       string
		text       string
		leads      bool
		reconciles float64
		queued     float64
	}{
		{"follower", "mpi_operator_is_leader 0\n", false, 0, 0},
		{"leader syncing its caches", "mpi_operator_is_leader 1\n" +
			`controller_runtime_reconcile_total{controller="mpijob",result="success"} 0` + "\n", true, 0, 0},
		{"leader working", "# HELP x\nmpi_operator_is_leader 1\n" +
			`controller_runtime_reconcile_total{controller="mpijob",result="error"} 2` + "\n" +
			`controller_runtime_reconcile_total{controller="mpijob",result="success"} 5` + "\n" +
			`controller_runtime_reconcile_total{controller="other",result="success"} 40` + "\n" +
			`workqueue_depth{controller="mpijob",name="mpijob",priority="-100"} 120` + "\n" +
			`workqueue_depth{controller="mpijob",name="mpijob",priority="0"} 3` + "\n" +
			`workqueue_depth{controller="other",name="other",priority="0"} 9` + "\n", true, 7, 123},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m metricsState
			for l := range strings.Lines(tc.text) {
				m.add(l)
			}
			if m.leads != tc.leads || m.reconciles != tc.reconciles || m.queued != tc.queued {
				t.Errorf("got leads=%v reconciles=%v queued=%v, want %v %v %v", m.leads, m.reconciles, m.queued, tc.leads, tc.reconciles, tc.queued)
			}
		})
	}
}
