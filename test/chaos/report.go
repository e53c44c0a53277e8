package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// result is everything a run found.
type result struct {
	o          options
	jobs       int
	big        string
	kills      killStats
	acts       *actionStats
	outage     outage
	finishedIn time.Duration
	allFinal   bool

	right     int
	states    map[kubeflow.JobConditionType]int
	wrong     []string
	restarts  restartResult
	idle      time.Duration
	idleWhere string
	orphans   []string
	pods      createCounts
	launchers createCounts
	// unreadable are audit log lines cut short by a stopping API server.
	unreadable int
	races      raceResult
}

// print writes the table of figures, then the details of every violation,
// and reports whether there was none.
func (r *result) print(w io.Writer) bool {
	ok := true
	check := func(held bool) string {
		if held {
			return "ok"
		}
		ok = false
		return "**VIOLATED**"
	}
	rows := [][3]string{
		{"MPIJobs in their right final state",
			fmt.Sprintf("%d of %d (%d Succeeded, %d Failed, %d not final)", r.right, r.jobs,
				r.states[kubeflow.JobSucceeded], r.states[kubeflow.JobFailed], r.states[""]),
			check(r.right == r.jobs && r.allFinal)},
		{"Pods created twice for one (job, index, attempt)",
			fmt.Sprintf("%d (of %d Pod creates; %d refused otherwise; %d audit lines unreadable)",
				r.pods.Duplicates, r.pods.Created, r.pods.Other, r.unreadable),
			check(r.pods.Duplicates == 0)},
		{"launcher Job creates refused as AlreadyExists",
			fmt.Sprintf("%d (of %d Job creates; %d refused otherwise)", r.launchers.Duplicates, r.launchers.Created, r.launchers.Other),
			"figure"},
		{"orphaned children after the MPIJobs were deleted", fmt.Sprintf("%d", len(r.orphans)), check(len(r.orphans) == 0)},
		{fmt.Sprintf("longest idle with work left (bound %s)", r.o.idleBound),
			fmt.Sprintf("%s (%s)", r.idle.Round(100*time.Millisecond), r.idleWhere), check(r.idle <= r.o.idleBound)},
		{"restart records that hold",
			fmt.Sprintf("%d of %d jobs restarted (%d restarts; %d overtaken by the launcher completing)",
				r.restarts.Right+r.restarts.Overtaken, r.restarts.Jobs, r.restarts.Restarts, r.restarts.Overtaken),
			check(len(r.restarts.Wrong) == 0)},
		{"data races the operators reported", r.races.text(), check(r.races.total() == 0)},
		{"jobs that lost a worker while their launcher ran, restarted",
			fmt.Sprintf("%d of %d", r.restarts.LostRestarted, r.restarts.Lost), "figure"},
		{"leader kills (SIGKILL)", r.kills.summary(), "figure"},
		{"API server restarts", r.outageText(), "figure"},
		{"worker Pods deleted / evicted", fmt.Sprintf("%d / %d (%d refused)", r.acts.Deleted, r.acts.Evicted, r.acts.Failed), "figure"},
		{"jobs suspended / resumed", fmt.Sprintf("%d / %d", r.acts.Suspended, r.acts.Resumed), "figure"},
		{"from the first MPIJob to all final", r.finishedIn.Round(time.Second).String(), "figure"},
	}
	_, _ = fmt.Fprintf(w, "\nchaos: seed %d, %d MPIJobs (%s has %d workers), 2 operators, %d kwok nodes\n\n",
		r.o.seed, r.jobs, r.big, r.o.bigWorkers, r.o.nodes)
	_, _ = fmt.Fprintln(w, "| property or figure | value | |")
	_, _ = fmt.Fprintln(w, "| --- | --- | --- |")
	for _, row := range rows {
		_, _ = fmt.Fprintf(w, "| %s | %s | %s |\n", row[0], row[1], row[2])
	}
	details := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		_, _ = fmt.Fprintf(w, "\n%s:\n  %s\n", title, strings.Join(lines, "\n  "))
	}
	details("jobs not in their right final state", r.wrong)
	details("Pods the operator tried to create while one of that name existed", r.pods.Names)
	details("launcher Job creates refused as AlreadyExists", r.launchers.Names)
	details("orphaned children", r.orphans)
	details("restart records that do not hold", r.restarts.Wrong)
	var raceLogs []string
	for path, n := range r.races.Reports {
		raceLogs = append(raceLogs, fmt.Sprintf("%s: %d reports", path, n))
	}
	sort.Strings(raceLogs)
	details("logs with data race reports", raceLogs)
	if ok {
		_, _ = fmt.Fprintln(w, "\nevery property held")
	}
	return ok
}

func (r *result) outageText() string {
	if r.outage.from.IsZero() {
		return "0"
	}
	return fmt.Sprintf("1 (down %s)", r.outage.to.Sub(r.outage.from).Round(100*time.Millisecond))
}
