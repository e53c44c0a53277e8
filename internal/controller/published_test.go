package controller

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// makeLauncherPod plays the Job controller and the kubelet: a Pod of the
// launcher Job's template, running with an address. older leaves out the
// volume through which the wait reads the operator's word, as an older
// operator's template did.
func (f *fixture) makeLauncherPod(t *testing.T, name string, older bool) {
	t.Helper()
	l := f.launcher(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "ns", Labels: l.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(l, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *l.Spec.Template.Spec.DeepCopy(),
	}
	if older {
		pod.Spec.Volumes = nil
	}
	if err := f.client.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	f.updatePod(t, name, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP, p.Status.PodIPs = "10.0.0.2", []corev1.PodIP{{IP: "10.0.0.2"}}
	})
}

func (f *fixture) told(t *testing.T, name string) bool {
	t.Helper()
	p := &corev1.Pod{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p.Annotations[builder.AnnotationWorkersPublished] == "true"
}

// TestLauncherIsToldOnceEveryWorkerIsPublished: where the cluster's DNS
// caches denials, the launcher's wait asks DNS only once told. It is told once the slices hold every worker, with one
// patch, and not before; a launcher Pod of an older operator is not.
func TestLauncherIsToldOnceEveryWorkerIsPublished(t *testing.T) {
	for name, older := range map[string]bool{"this operator's launcher": false, "an older operator's launcher": true} {
		t.Run(name, func(t *testing.T) {
			job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
			job.Annotations = map[string]string{builder.AnnotationDNSCachesDenials: "true"}
			f := newFixture(t, interceptor.Funcs{}, job)
			f.reconcile(t, job)
			for i := range 2 {
				f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, i))
			}
			f.makeLauncherPod(t, "pi-launcher-abcde", older)
			giveAddress(t, f, job, 0, "10.0.0.10")
			f.reconcile(t, job)
			if f.told(t, "pi-launcher-abcde") {
				t.Fatal("told with worker 1 not yet published")
			}
			giveAddress(t, f, job, 1, "10.0.0.11")
			f.writes = calls{}
			f.reconcile(t, job)
			if got := published(t, f, job); len(got) != 3 {
				t.Fatalf("published %v, want the launcher and both workers", got)
			}
			if f.told(t, "pi-launcher-abcde") == older {
				t.Errorf("told %t, want %t", !older, !older)
			}
			want := 1
			if older {
				want = 0
			}
			if f.writes["patch Pod"] != want {
				t.Errorf("writes %v, want %d patch of the launcher Pod", f.writes, want)
			}
			f.writes = calls{}
			f.reconcile(t, job)
			if f.writes["patch Pod"] != 0 {
				t.Errorf("writes %v once told: want no patch", f.writes)
			}
		})
	}
}

// A launcher Pod made after every worker was published (a restart makes
// the workers first; the Job controller may be slow) is told by the next
// reconcile, with no slice written.
func TestLauncherMadeLaterIsToldAtOnce(t *testing.T) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	job.Annotations = map[string]string{builder.AnnotationDNSCachesDenials: "true"}
	f := newFixture(t, interceptor.Funcs{}, job)
	f.reconcile(t, job)
	f.r.Expectations.CreationObserved("ns/pi", builder.WorkerName(job, 0))
	giveAddress(t, f, job, 0, "10.0.0.10")
	f.reconcile(t, job)
	f.makeLauncherPod(t, "pi-launcher-abcde", false)
	f.reconcile(t, job)
	if !f.told(t, "pi-launcher-abcde") {
		t.Errorf("launcher Pod not told; the job: %+v", f.job(t, job).Status.Conditions)
	}
}
