package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// idleFor plays the controller's queue for a job nothing else happens to,
// until the fake clock has moved on by span: a reconcile that wrote is
// followed at once by another (its watch event), and one that asked for a
// requeue runs when it asked. It returns the reconciles that a timer ran
// and that wrote nothing (wasted), and the writes of the span.
func idleFor(t *testing.T, f *fixture, job *kubeflow.MPIJob, span time.Duration) (wasted int, writes calls) {
	t.Helper()
	f.writes = calls{}
	end, timer := f.clock.Now().Add(span), false
	total := func() int {
		n := 0
		for _, c := range f.writes {
			n += c
		}
		return n
	}
	for range 100 {
		before := total()
		res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
		if err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		wrote := total() > before
		if timer && !wrote {
			wasted++
		}
		if wrote {
			timer = false
			continue
		}
		next := f.clock.Now().Add(res.RequeueAfter)
		if res.RequeueAfter <= 0 || next.After(end) {
			return wasted, f.writes
		}
		f.clock.SetTime(next)
		timer = true
	}
	t.Fatal("still reconciling after 100 rounds")
	return wasted, f.writes
}

// A Running job that nothing happens to costs no reconcile but those its
// writes and timers need, over an hour: a count-only status write was
// followed by a reconcile a second later that had nothing to do.
func TestIdleRunningJobCostsNothing(t *testing.T) {
	// The deadline's timer runs past the hour watched.
	for name, job := range map[string]*kubeflow.MPIJob{
		"no deadline":   testjob.MakeMPIJob("pi", "ns").Workers(2).Obj(),
		"with deadline": testjob.MakeMPIJob("pi", "ns").Workers(2).ActiveDeadline(7200).Obj(),
	} {
		t.Run(name, func(t *testing.T) {
			f, job, _ := running(t, job)
			if wasted, writes := idleFor(t, f, job, time.Minute); wasted > 0 {
				t.Errorf("the minute after Running: %d reconciles with nothing to do (writes %v)", wasted, writes)
			}
			// Counts the status shows that the Pods do not: a count-only
			// write corrects them.
			got := f.job(t, job)
			got.Status.ReplicaStatuses[kubeflow.MPIReplicaTypeWorker].Active = 0
			if err := f.client.Status().Update(context.Background(), got); err != nil {
				t.Fatal(err)
			}
			wasted, writes := idleFor(t, f, job, time.Hour)
			if wasted > 0 {
				t.Errorf("an idle hour: %d reconciles with nothing to do (writes %v)", wasted, writes)
			}
			if writes["status MPIJob"] != 1 {
				t.Errorf("an idle hour wrote the status %d times, want once (writes %v)", writes["status MPIJob"], writes)
			}
		})
	}
}

// A sync error is returned even when the status write fails too, and a
// conflicting status write does not hide it.
func TestSyncErrorIsNotDroppedByAFailedStatusWrite(t *testing.T) {
	syncErr := errors.New("creating Pods refused")
	for name, statusErr := range map[string]error{
		"write refused":    errors.New("status write refused"),
		"write conflicted": apierrors.NewConflict(schema.GroupResource{Group: "kubeflow.org", Resource: "mpijobs"}, "pi", errors.New("stale")),
	} {
		t.Run(name, func(t *testing.T) {
			job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
			f := newFixture(t, interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if typeName(obj) == "Pod" {
						return syncErr
					}
					return c.Create(ctx, obj, opts...)
				},
				SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
					return statusErr
				},
			}, job)
			_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
			if err == nil || !strings.Contains(err.Error(), syncErr.Error()) {
				t.Errorf("reconcile returned %v, want the sync's error %q in it", err, syncErr)
			}
			if !apierrors.IsConflict(statusErr) && !strings.Contains(err.Error(), statusErr.Error()) {
				t.Errorf("reconcile returned %v, want the status write's error %q in it", err, statusErr)
			}
		})
	}
}
