package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

func labelledPod(ns, name, job, role string) *corev1.Pod {
	l := map[string]string{}
	if job != "" {
		l[kubeflow.LabelJobName], l[kubeflow.LabelJobRole] = job, role
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l}}
}

// InJob hands out the cached Pods themselves, of one job's role in one
// namespace, from every store (one per watched namespace).
func TestInJobReadsTheCachedPodsOfOneJobsRole(t *testing.T) {
	var none *PodStores
	if _, ok, _ := none.InJob("a", "pi", builder.RoleWorker); ok {
		t.Error("no stores, yet InJob answered: the caller would not list")
	}
	p := &PodStores{}
	lw := &toolscache.ListWatch{}
	first := p.NewInformer(lw, &corev1.Pod{}, 0, toolscache.Indexers{}).GetIndexer()
	second := p.NewInformer(lw, &corev1.Pod{}, 0, nil).GetIndexer()
	p.NewInformer(lw, &corev1.Service{}, 0, nil) // not a Pod store
	w0, w1 := labelledPod("a", "pi-worker-0", "pi", builder.RoleWorker), labelledPod("b", "pi-worker-1", "pi", builder.RoleWorker)
	for _, o := range []struct {
		s   toolscache.Indexer
		pod *corev1.Pod
	}{
		{first, w0},
		{first, labelledPod("a", "pi-launcher-x", "pi", builder.RoleLauncher)},
		{first, labelledPod("a", "other-worker-0", "other", builder.RoleWorker)},
		{first, labelledPod("a", "bare", "", "")},
		{second, w1},
	} {
		if err := o.s.Add(o.pod); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.stores) != 2 {
		t.Fatalf("%d stores kept, want the 2 Pod stores", len(p.stores))
	}
	for ns, want := range map[string]*corev1.Pod{"a": w0, "b": w1} {
		got, ok, err := p.InJob(ns, "pi", builder.RoleWorker)
		if err != nil || !ok {
			t.Fatalf("InJob(%s): ok %t, err %v", ns, ok, err)
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("InJob(%s, pi, worker) = %v, want the cached %s itself", ns, got, want.Name)
		}
	}
	if got, _, _ := p.InJob("a", "pi", builder.RoleLauncher); len(got) != 1 || got[0].Name != "pi-launcher-x" {
		t.Errorf("InJob(a, pi, launcher) = %v, want pi-launcher-x", got)
	}
	if got, ok, _ := p.InJob("c", "pi", builder.RoleWorker); !ok || len(got) != 0 {
		t.Errorf("InJob in a namespace without Pods = %v (ok %t), want none", got, ok)
	}
}
