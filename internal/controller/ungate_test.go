package controller

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// gatedLauncherPod is the Pod the Job controller makes from the launcher
// Job's template, gated as the template is.
func gatedLauncherPod(t *testing.T, f *fixture) *corev1.Pod {
	t.Helper()
	l := f.launcher(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "pi-launcher-abcde", Namespace: "ns", Labels: l.Spec.Template.Labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(l, batchv1.SchemeGroupVersion.WithKind("Job"))},
	}, Spec: *l.Spec.Template.Spec.DeepCopy()}
	if err := f.client.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// TestLauncherGoesWhileTheCacheLagsTheStatusWrite: a reconcile that finds
// the cache without its own Created write still lets the first launcher's
// Pod go once every worker is made, and writes nothing else; it keeps the
// gate when that write did not leave the job starting, when a worker is
// not in the cache yet, or when one has ended.
func TestLauncherGoesWhileTheCacheLagsTheStatusWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, f *fixture)
		freed bool
	}{
		{name: "every worker made", freed: true},
		{name: "the write finished the job", spoil: func(t *testing.T, f *fixture) {
			v, _ := f.r.mem.writtenOver.Load("ns/pi")
			w := v.(statusWrite)
			w.starting = false
			f.r.mem.writtenOver.Store("ns/pi", w)
		}},
		{name: "a worker not in the cache yet", spoil: func(t *testing.T, f *fixture) {
			f.r.Expectations.ExpectCreations("ns/pi", "pi-worker-1")
		}},
		{name: "a worker failed", spoil: func(t *testing.T, f *fixture) {
			f.updatePod(t, "pi-worker-1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
			var stale *kubeflow.MPIJob
			f := newFixture(t, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if j, ok := obj.(*kubeflow.MPIJob); ok && stale != nil {
						stale.DeepCopyInto(j)
						return nil
					}
					return c.Get(ctx, key, obj, opts...)
				},
			}, job)
			snapshot := &kubeflow.MPIJob{}
			if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(job), snapshot); err != nil {
				t.Fatal(err)
			}
			stale = snapshot    // the cache serves the job as it was before the first status write
			f.reconcile(t, job) // workers, gated launcher Job, Created
			pod := gatedLauncherPod(t, f)
			for i := range 2 {
				f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, i))
			}
			if tc.spoil != nil {
				tc.spoil(t, f)
			}
			f.writes = calls{}
			res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
			if err != nil {
				t.Fatal(err)
			}
			got := &corev1.Pod{}
			if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(pod), got); err != nil {
				t.Fatal(err)
			}
			if freed := !builder.GatedOnWorkers(got); freed != tc.freed {
				t.Errorf("launcher Pod let go: %t, want %t", freed, tc.freed)
			}
			want := calls{}
			if tc.freed {
				want["patch Pod"] = 1
			}
			if len(f.writes) != len(want) || f.writes["patch Pod"] != want["patch Pod"] || res.RequeueAfter <= 0 {
				t.Errorf("writes %v, requeueAfter %v; want %v and a call back", f.writes, res.RequeueAfter, want)
			}
		})
	}
}
