package controller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
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
