// Package metricsdoc lists the metrics the operator serves, from the
// collectors registered with controller-runtime's registry, for
// docs/metrics.md (hack/metricsdoc) and for the test that keeps the
// Grafana dashboard's queries pointing at metrics that exist. It fills
// every labelled series it lists once, so it belongs in a process of its
// own (a generator, a test binary), never in the operator.
package metricsdoc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	opcontroller "github.com/mpi-operator/mpi-operator/internal/controller"
)

// Metric is one metric family as the endpoint serves it.
type Metric struct {
	Name   string
	Type   string
	Help   string
	Labels []string
}

// Prefixes of the families listed: the operator's, and controller-runtime's
// reconcile and work queue metrics. The Go runtime's, the process's and
// client-go's are served too but are nobody's here to document.
var Prefixes = []string{"mpi_operator_", "controller_runtime_", "workqueue_"}

// Metrics returns the families served, sorted by name. A labelled family
// shows on the endpoint only once it has a series: this makes one for each
// of the operator's, and runs one reconcile through a controller-runtime
// controller for its own.
func Metrics(ctx context.Context) ([]Metric, error) {
	for _, c := range opcontroller.Collectors() {
		if err := fill(c); err != nil {
			return nil, err
		}
	}
	if err := reconcileOnce(ctx); err != nil {
		return nil, err
	}
	families, err := metrics.Registry.Gather()
	if err != nil {
		return nil, fmt.Errorf("gathering metrics: %w", err)
	}
	var out []Metric
	for _, f := range families {
		if !slices.ContainsFunc(Prefixes, func(p string) bool { return strings.HasPrefix(f.GetName(), p) }) {
			continue
		}
		m := Metric{Name: f.GetName(), Type: strings.ToLower(f.GetType().String()), Help: f.GetHelp()}
		for _, l := range f.GetMetric()[0].GetLabel() {
			m.Labels = append(m.Labels, l.GetName())
		}
		out = append(out, m)
	}
	return out, nil
}

// fill makes one series of a labelled collector, with as many label
// values as it takes (a vector does not say how many).
func fill(c prometheus.Collector) error {
	var try func(values ...string) error
	switch c := c.(type) {
	case *prometheus.CounterVec:
		try = func(v ...string) error { _, err := c.GetMetricWithLabelValues(v...); return err }
	case *prometheus.GaugeVec:
		try = func(v ...string) error { _, err := c.GetMetricWithLabelValues(v...); return err }
	case *prometheus.HistogramVec:
		try = func(v ...string) error { _, err := c.GetMetricWithLabelValues(v...); return err }
	default:
		return nil // unlabelled: always served
	}
	var values []string
	for range 10 {
		if try(values...) == nil {
			return nil
		}
		values = append(values, "x")
	}
	return fmt.Errorf("no series of %T takes up to 10 labels", c)
}

// reconcileOnce runs a controller with a no-op reconciler for one request,
// as the operator's controller runs, so that controller-runtime's reconcile
// and work queue metrics have their series.
func reconcileOnce(ctx context.Context) error {
	ctrl.SetLogger(logr.Discard())
	done := make(chan struct{})
	c, err := controller.NewUnmanaged("mpijob", controller.Options{
		SkipNameValidation: ptr.To(true),
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			close(done)
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		return fmt.Errorf("making a controller: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = c.Watch(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		q.Add(reconcile.Request{})
		return nil
	}))
	if err != nil {
		return fmt.Errorf("watching: %w", err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- c.Start(ctx) }()
	select {
	case <-done:
	case err := <-stopped:
		return fmt.Errorf("controller stopped before reconciling: %w", err)
	case <-ctx.Done():
		return errors.New("no reconcile within a minute")
	}
	// The reconcile's duration is observed as it returns: stop the
	// controller and let it finish.
	cancel()
	if err := <-stopped; err != nil {
		return fmt.Errorf("stopping the controller: %w", err)
	}
	return nil
}
