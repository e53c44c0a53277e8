package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// publishedPatch sets builder.AnnotationWorkersPublished.
var publishedPatch = client.RawPatch(types.MergePatchType,
	[]byte(`{"metadata":{"annotations":{"`+builder.AnnotationWorkersPublished+`":"true"}}}`))

// tellLaunchers tells the current launcher's Pods that every worker's
// name is in DNS, once it is: their wait asks DNS no sooner
// (builder/published.go says why). It is called once the slices that
// complete the set are written, or when the cache shows them written; a
// launcher Pod made later is told by the reconcile its creation brings.
// Pods of an older operator, whose wait does not read the annotation, are
// left alone.
func (r *Reconciler) tellLaunchers(ctx context.Context, kids *children) error {
	for _, p := range kids.launcherPods {
		if !builder.WaitsForPublished(p) || p.Annotations[builder.AnnotationWorkersPublished] != "" ||
			isTerminating(p) || isPodFinished(p) {
			continue
		}
		// A Pod of its own: the cache's is never written to.
		target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
		if err := r.Client.Patch(ctx, target, publishedPatch); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("telling launcher Pod %s its workers are published: %w", p.Name, err)
		}
	}
	return nil
}
