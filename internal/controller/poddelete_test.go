package controller

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// TestClientsetPodsDeletesThatPodOnly: the delete names the Pod in its
// namespace and carries its UID as a precondition, so a Pod made again
// under the name since the cache saw it is not the one deleted.
func TestClientsetPodsDeletesThatPodOnly(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pi-worker-0", UID: types.UID("u-1")}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "pi-worker-0", UID: types.UID("u-2")}}
	cs := fake.NewClientset(pod, other)
	if err := (ClientsetPods{Clientset: cs}).DeletePod(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	var deletes []clienttesting.DeleteActionImpl
	for _, a := range cs.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			deletes = append(deletes, d)
		}
	}
	if len(deletes) != 1 {
		t.Fatalf("deletes %v, want one", deletes)
	}
	d := deletes[0]
	if d.Namespace != "ns" || d.Name != "pi-worker-0" || d.Resource.Resource != "pods" {
		t.Errorf("deleted %s %s/%s, want pods ns/pi-worker-0", d.Resource.Resource, d.Namespace, d.Name)
	}
	if p := d.DeleteOptions.Preconditions; p == nil || p.UID == nil || *p.UID != pod.UID {
		t.Errorf("preconditions %+v, want the Pod's UID %s", p, pod.UID)
	}
	if _, err := cs.CoreV1().Pods("other").Get(context.Background(), "pi-worker-0", metav1.GetOptions{}); err != nil {
		t.Errorf("the other namespace's Pod of the same name: %v", err)
	}
}

// BenchmarkPodDelete measures one Pod delete on the operator's side, through
// controller-runtime's client and through client-go's typed client, against
// a server that answers as the API server does: with the deleted Pod, a
// running worker. The server's answer is encoded once, so what differs is
// the client's work.
//
//	go test -run '^$' -bench PodDelete -benchmem ./internal/controller/
func BenchmarkPodDelete(b *testing.B) {
	job := testjob.MakeMPIJob("pi", "ns").Workers(1).Obj()
	kubeflow.SetDefaults(job)
	pod := builder.WorkerPod(job, 0, builder.Options{ClusterDomain: "cluster.local"})
	pod.APIVersion, pod.Kind = "v1", "Pod"
	pod.UID, pod.ResourceVersion = "u-1", "12345"
	pod.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	pod.Spec.NodeName = "node-1"
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", ContainerStatuses: []corev1.ContainerStatus{{
		Name: "worker", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
	}}}
	body, err := json.Marshal(pod)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, RateLimiter: flowcontrol.NewFakeAlwaysRateLimiter()}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	crClient, err := client.New(cfg, client.Options{Scheme: newScheme(), Mapper: mapper})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		r    *Reconciler
	}{
		{"controller-runtime", &Reconciler{Client: crClient}},
		{"client-go", &Reconciler{PodDeletes: ClientsetPods{Clientset: kubernetes.NewForConfigOrDie(cfg)}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := tc.r.deletePod(ctx, pod); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
