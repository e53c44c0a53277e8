package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodDeleter deletes one Pod, that Pod and no other of its name (its UID
// is a precondition): a Pod made again under the name since the cache
// saw it stays.
type PodDeleter interface {
	DeletePod(ctx context.Context, pod *corev1.Pod) error
}

// ClientsetPods deletes Pods through client-go's typed client, which reads
// only the status of the API server's answer. controller-runtime's client
// (v0.25) decodes the deleted Pod the answer carries and converts it
// through JSON into an Unstructured that nothing here reads: a tenth of
// the operator's CPU while a 3000-worker job was cleaned up
// (docs/records/scale-history.md, "Deleting Pods without reading them back").
type ClientsetPods struct{ Clientset kubernetes.Interface }

// DeletePod implements PodDeleter.
func (c ClientsetPods) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	uid := pod.UID
	return c.Clientset.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
}

// deletePod deletes a Pod of the job through PodDeletes, or through Client
// when none is set (unit tests, on a fake client).
func (r *Reconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	if r.PodDeletes != nil {
		return r.PodDeletes.DeletePod(ctx, pod)
	}
	return r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
}
