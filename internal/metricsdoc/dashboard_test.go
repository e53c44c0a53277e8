package metricsdoc

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const dashboardFile = "../../config/grafana/mpi-operator-dashboard.json"

// Labels Prometheus adds when it scrapes, which no collector declares.
var scrapeLabels = []string{"instance", "job", "pod"}

var (
	metricName = regexp.MustCompile(`\b(?:` + strings.Join(Prefixes, "|") + `)[a-zA-Z0-9_:]*`)
	// by (...) and without (...) clauses, and label matchers in {...}.
	grouping = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	matcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"`)
)

// served indexes the metrics the endpoint serves by every name a query can
// use: a histogram's series are its _bucket, _sum and _count.
func served(t *testing.T) map[string]Metric {
	t.Helper()
	ms, err := Metrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Metric{}
	for _, m := range ms {
		out[m.Name] = m
		if m.Type == "histogram" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				h := m
				if suffix == "_bucket" {
					h.Labels = append(slices.Clone(h.Labels), "le")
				}
				out[m.Name+suffix] = h
			}
		}
	}
	return out
}

// queries returns every PromQL expression in the dashboard: the panels'
// targets and the template variables' queries.
func queries(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "definition") {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}

// Every metric the dashboard queries is one the operator serves, and every
// label it groups or filters by is one of those metrics' labels: a renamed
// metric or label fails here instead of leaving a panel empty.
func TestDashboardQueriesOnlyServedMetrics(t *testing.T) {
	known := served(t)
	exprs := queries(t)
	if len(exprs) == 0 {
		t.Fatal("no queries found in the dashboard")
	}
	used := map[string]bool{}
	for _, expr := range exprs {
		labels := slices.Clone(scrapeLabels)
		names := metricName.FindAllString(expr, -1)
		if len(names) == 0 {
			t.Errorf("query names none of the operator's metrics: %s", expr)
		}
		for _, name := range names {
			m, ok := known[name]
			if !ok {
				t.Errorf("query uses %s, which the operator does not serve: %s", name, expr)
				continue
			}
			used[m.Name] = true
			labels = append(labels, m.Labels...)
		}
		var asked []string
		for _, g := range grouping.FindAllStringSubmatch(expr, -1) {
			for l := range strings.SplitSeq(g[1], ",") {
				asked = append(asked, strings.TrimSpace(l))
			}
		}
		for _, m := range matcher.FindAllStringSubmatch(expr, -1) {
			asked = append(asked, m[1])
		}
		for _, l := range asked {
			if l != "" && !slices.Contains(labels, l) {
				t.Errorf("query uses label %q, which none of its metrics has: %s", l, expr)
			}
		}
	}
	// The dashboard shows what issue 11 asks to see.
	for _, want := range []string{
		"mpi_operator_job_startup_phase_seconds", "mpi_operator_job_duration_seconds",
		"mpi_operator_namespace_jobs_failed_total", "mpi_operator_namespace_jobs_restarted_total",
		"mpi_operator_launcher_attempts_total", "mpi_operator_launcher_attempts_failed_total",
		"controller_runtime_reconcile_errors_total", "controller_runtime_reconcile_time_seconds",
	} {
		if !used[want] {
			t.Errorf("the dashboard shows no panel of %s", want)
		}
	}
}

// docs/metrics.md is what hack/metricsdoc writes now (make verify checks
// the same; this catches it in go test too).
func TestMetricsDocIsFresh(t *testing.T) {
	ms, err := Metrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(Markdown(ms)) {
		t.Error("docs/metrics.md is stale: run make metricsdoc")
	}
}
