package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

// report prints the tables to stdout and keeps a copy for the docs.
type report struct {
	w   io.Writer
	buf bytes.Buffer
}

func newReport() *report {
	r := &report{}
	r.w = io.MultiWriter(os.Stdout, &r.buf)
	return r
}

func (r *report) printf(format string, a ...any) { _, _ = fmt.Fprintf(r.w, format, a...) }

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// sizes returns the worker counts of the runs, in order of appearance.
func sizesOf(all []startupResult) []int {
	var out []int
	for _, r := range all {
		if !slices.Contains(out, r.Workers) {
			out = append(out, r.Workers)
		}
	}
	return out
}

func runsOf(all []startupResult, n int) []startupResult {
	var out []startupResult
	for _, r := range all {
		if r.Workers == n {
			out = append(out, r)
		}
	}
	return out
}

// milestones are the columns of the startup table, in order.
var milestones = []struct {
	name string
	get  func(startupResult) time.Duration
}{
	{"all worker Pods created", func(r startupResult) time.Duration { return r.WorkersCreated }},
	{"all worker Pods Running", func(r startupResult) time.Duration { return r.WorkersRunning }},
	{"launcher Pod created", func(r startupResult) time.Duration { return r.LauncherCreated }},
	{"MPIJob Running", func(r startupResult) time.Duration { return r.JobRunning }},
	{"floor: N+1 bare Pods Running", func(r startupResult) time.Duration { return r.Floor }},
	{"design floor: the job's objects as the operator builds them, from a bare client, every Pod Running", func(r startupResult) time.Duration { return r.DesignFloor }},
}

func durations(rows []startupResult, get func(startupResult) time.Duration) []time.Duration {
	var ds []time.Duration
	for _, r := range rows {
		ds = append(ds, get(r))
	}
	return ds
}

func (r *report) startup(n int, rows []startupResult) {
	r.printf("\nStartup of one MPIJob of %d workers (%d runs; time from creation)\n\n", n, len(rows))
	r.printf("| milestone | median | max |\n| --- | --- | --- |\n")
	for _, m := range milestones {
		ds := durations(rows, m.get)
		r.printf("| %s | %s | %s |\n", m.name, ms(median(ds)), ms(maxOf(ds)))
	}
	job := median(durations(rows, milestones[3].get))
	floor := median(durations(rows, milestones[4].get))
	design := median(durations(rows, milestones[5].get))
	if floor > 0 && design > 0 {
		r.printf("\nratio MPIJob Running / floor (medians): %.2f to bare Pods, %.2f to the design floor\n",
			float64(job)/float64(floor), float64(job)/float64(design))
	}
}

func medianOf(vs []float64) float64 {
	s := slices.Clone(vs)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// requests prints the operator's writes per job by verb and resource, and
// its CPU and reconciles, one column per job size (medians over the runs),
// counted over span: the part of each job's life they cover.
func (r *report) requests(all []startupResult, span string) {
	sizes := sizesOf(all)
	if len(sizes) == 0 {
		return
	}
	keys := map[string]bool{}
	for _, res := range all {
		for k := range res.Requests {
			keys[k] = true
		}
	}
	r.printf("\nThe operator's writes per job, %s, from the API server's audit log (medians)\n\n", span)
	r.printf("| request |")
	for _, n := range sizes {
		r.printf(" N = %d |", n)
	}
	r.printf("\n| --- |%s\n", strings.Repeat(" --- |", len(sizes)))
	row := func(name string, get func(startupResult) float64) {
		r.printf("| %s |", name)
		for _, n := range sizes {
			var vs []float64
			for _, res := range runsOf(all, n) {
				vs = append(vs, get(res))
			}
			r.printf(" %.0f |", medianOf(vs))
		}
		r.printf("\n")
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		row(k, func(res startupResult) float64 { return res.Requests[k] })
	}
	row("**all writes**", func(res startupResult) float64 { return res.Requests.writes() })
	row("**writes − N** (target ≤ 8)", func(res startupResult) float64 { return res.Requests.writes() - float64(res.Workers) })
	row("**status writes**", func(res startupResult) float64 { return res.Requests.statusWrites() })
	r.printf("\nThe operator's CPU time and reconciles per job, %s (medians)\n\n| N |", span)
	for _, n := range sizes {
		r.printf(" %d |", n)
	}
	r.printf("\n| --- |%s", strings.Repeat(" --- |", len(sizes)))
	for _, m := range []struct {
		name, format string
		of           func(startupResult) float64
	}{
		{"CPU seconds", " %.2f |", func(res startupResult) float64 { return res.CPUSeconds }},
		{"reconciles", " %.0f |", func(res startupResult) float64 { return res.Reconciles }},
	} {
		r.printf("\n| %s |", m.name)
		for _, n := range sizes {
			var vs []float64
			for _, res := range runsOf(all, n) {
				vs = append(vs, m.of(res))
			}
			r.printf(m.format, medianOf(vs))
		}
	}
	r.printf("\n")
}

func (r *report) throughput(runs []throughputResult) {
	t := runs[0]
	r.printf("\nThroughput: %d MPIJobs of %d workers created at once (median of %d runs)\n\n", t.Jobs, t.Workers, len(runs))
	of := func(get func(throughputResult) time.Duration) time.Duration {
		var ds []time.Duration
		for _, run := range runs {
			ds = append(ds, get(run))
		}
		return median(ds)
	}
	r.printf("| milestone | time |\n| --- | --- |\n")
	r.printf("| all worker Pods created | %s |\n", ms(of(func(t throughputResult) time.Duration { return t.WorkersCreated })))
	r.printf("| all launcher Pods created (by the Job controller) | %s |\n", ms(of(func(t throughputResult) time.Duration { return t.LaunchersCreated })))
	r.printf("| all worker Pods Running | %s |\n", ms(of(func(t throughputResult) time.Duration { return t.WorkersRunning })))
	r.printf("| all launcher Pods Running | %s |\n", ms(of(func(t throughputResult) time.Duration { return t.LaunchersRunning })))
	r.printf("| all MPIJobs Running | %s |\n", ms(of(func(t throughputResult) time.Duration { return t.AllRunning })))
	r.printf("| all MPIJobs Succeeded (launchers complete 5 s after they run) | %s |\n", ms(of(func(t throughputResult) time.Duration { return t.AllSucceeded })))
	r.printf("| floor: %d bare Pods Running | %s |\n", t.Jobs*(t.Workers+1), ms(of(func(t throughputResult) time.Duration { return t.Floor })))
	r.printf("| design floor: the same jobs' Secrets, Services, ConfigMaps, EndpointSlices, workers and launcher Jobs from a bare client, every Pod Running | %s |\n",
		ms(of(func(t throughputResult) time.Duration { return t.DesignFloor })))
	r.printf("\n")
	r.ratios(runs, "floor", func(t throughputResult) time.Duration { return t.Floor }, " (target ≤ 1.15)")
	r.ratios(runs, "design floor", func(t throughputResult) time.Duration { return t.DesignFloor }, "")
}

// ratios prints all Running over one floor, per run and their median.
func (r *report) ratios(runs []throughputResult, name string, floor func(throughputResult) time.Duration, note string) {
	var ratios []float64
	for _, run := range runs {
		if floor(run) > 0 {
			ratios = append(ratios, float64(run.AllRunning)/float64(floor(run)))
		}
	}
	if len(ratios) == 0 {
		return
	}
	each := make([]string, len(ratios))
	for i, v := range ratios {
		each[i] = fmt.Sprintf("%.2f", v)
	}
	r.printf("ratio all Running / %s: %.2f, the median of %s%s\n", name, medianOf(ratios), strings.Join(each, ", "), note)
}

func (r *report) memory(samples []memorySample) {
	r.printf("\nOperator memory (RSS from /proc, Go heap in use from its metrics, 10 s after the objects exist)\n\n")
	r.printf("| cluster holds | RSS | Go heap in use | RSS / RSS with none |\n| --- | --- | --- | --- |\n")
	for _, s := range samples {
		r.printf("| %s | %.1f MiB | %.1f MiB | %.2f |\n", s.What, s.RSSMiB, s.HeapMiB, s.RSSMiB/samples[0].RSSMiB)
	}
}

// peer prints this operator, the floor and upstream's two configurations
// side by side: for each job size and for the throughput scenario, the
// time until every Pod runs (upstream) or the MPIJob is Running (this
// operator, whose Running waits for every Pod), as medians.
func (r *report) peer(o options, ours []startupResult, tput []throughputResult, peers []peerRun) {
	configs := peerConfigs(o)
	r.printf("\nThe peer: kubeflow/mpi-operator %s in the same run, one operator at a time (%d run(s) per size; the throughput scenario %d time(s) with limits raised, once at defaults; medians)\n\n", peerVersion(o.upstream), o.peerRuns, max(o.throughputRuns, 1))
	r.printf("| job | this operator: MPIJob Running | floor: bare Pods Running |")
	for _, c := range configs {
		r.printf(" upstream, %s: all Pods Running (MPIJob Running) |", c.Name)
	}
	r.printf("\n| --- | --- | --- |%s\n", strings.Repeat(" --- |", len(configs)))
	cell := func(jobs, n int, cfg peerConfig) string {
		var pods, running []time.Duration
		for _, p := range peers {
			if p.Config != cfg.Name || p.Jobs != jobs || p.Workers != n {
				continue
			}
			if p.AllPodsRunning == 0 {
				// Past cfg.MaxWait: what ran by then.
				return fmt.Sprintf(" %d of %d Pods after %s (never) |", p.PodsRunning, p.Pods, cfg.MaxWait)
			}
			pods = append(pods, p.AllPodsRunning)
			running = append(running, p.JobsRunning)
		}
		if len(pods) == 0 {
			return " not run |"
		}
		jr := "never"
		if m := median(running); m > 0 {
			jr = ms(m).String()
		}
		return fmt.Sprintf(" %s (%s) |", ms(median(pods)), jr)
	}
	for _, n := range sizesOf(ours) {
		rows := runsOf(ours, n)
		r.printf("| 1 × %d workers | %s | %s |", n, ms(median(durations(rows, func(s startupResult) time.Duration { return s.JobRunning }))),
			ms(median(durations(rows, func(s startupResult) time.Duration { return s.Floor }))))
		for _, c := range configs {
			r.printf("%s", cell(1, n, c))
		}
		r.printf("\n")
	}
	if len(tput) > 0 {
		var running, floor []time.Duration
		for _, t := range tput {
			running, floor = append(running, t.AllRunning), append(floor, t.Floor)
		}
		r.printf("| %d × %d workers | %s | %s |", tput[0].Jobs, tput[0].Workers, ms(median(running)), ms(median(floor)))
		for _, c := range configs {
			r.printf("%s", cell(tput[0].Jobs, tput[0].Workers, c))
		}
		r.printf("\n")
	}
	// Said beside the figures, so that a page tells them from those of
	// earlier runs, which had upstream as the cluster's admin, exempt
	// from priority and fairness.
	r.printf("\nupstream runs as the ServiceAccount %s/%s bound to its release's own ClusterRole (`%s`), at the API server's `workload-low` level like this operator.\n",
		benchcluster.UpstreamNamespace, benchcluster.UpstreamServiceAccount, benchcluster.UpstreamRoleFile)
	for _, c := range configs {
		if len(c.Args) > 0 {
			r.printf("\nupstream, %s: `%s`\n", c.Name, strings.Join(c.Args, " "))
		}
		if c.MaxWorkers > 0 {
			r.printf("\nupstream, %s: startup jobs of up to %d workers only, each run waiting at most %s for its Pods; it creates 5 Pods a second.\n",
				c.Name, c.MaxWorkers, c.MaxWait)
		}
	}
}
