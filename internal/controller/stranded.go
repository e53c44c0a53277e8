package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The Job controller puts its tracking finalizer on every launcher Pod and
// removes it once it has counted the Pod, or, when the Pod's Job is gone,
// when it next sees the Pod change (kubernetes#108752). If
// kube-controller-manager's cache misses the Job's deletion (it lists anew
// after an API server restart, and a Job made again under the same name
// looked like the old one changed: found by make chaos, c007-launcher-slw9w
// and c007-launcher-dxjfq), a stopped Pod never changes again, and it
// stays Terminating for ever, holding its namespace's deletion back. Each
// restart's launcher Job now has a name of its own
// (builder.LauncherJobName), which removes that cause; for any other way
// the Job controller can miss it, the operator removes that finalizer from
// a launcher Pod of a Job that is gone, once the Pod has stopped and the
// Job controller has had strandedAfter to do it itself.

// strandedAfter is how long the Job controller has to release a stopped
// Pod of a gone Job before the operator does.
const strandedAfter = 10 * time.Second

// releaseFinalizer removes the Job controller's tracking finalizer and no
// other, as the Job controller's own patch does.
var releaseFinalizer = client.RawPatch(types.StrategicMergePatchType,
	fmt.Appendf(nil, `{"metadata":{"$deleteFromPrimitiveList/finalizers":[%q]}}`, batchv1.JobTrackingFinalizer))

// isStranded reports whether a launcher Pod of a Job that is gone is being
// deleted and still held by the Job controller's finalizer.
func isStranded(p *corev1.Pod) bool {
	return isTerminating(p) && slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer)
}

// strandedSince is when a stranded Pod had stopped: when it stopped after
// its deletion was asked for, or at the end of its grace period when it
// never reported stopping (its node may be gone).
func strandedSince(p *corev1.Pod) time.Time {
	if !isPodFinished(p) {
		return p.DeletionTimestamp.Time
	}
	if t := lastTermination(p); t.After(deletionRequested(p)) {
		return t
	}
	return deletionRequested(p)
}

// releaseStranded removes the tracking finalizer of the stranded launcher
// Pods that have waited strandedAfter, and asks to be called again for the
// others.
func (r *Reconciler) releaseStranded(ctx context.Context, s *state, kids *children) error {
	var errs []error
	for _, p := range kids.stranded {
		if wait := strandedSince(p).Add(strandedAfter).Sub(s.now.Time); wait > 0 {
			s.requeueAfter(wait)
			continue
		}
		// The cache's Pod is shared (observe reads without copies), and
		// a patch writes its answer into the object it is given.
		pod := p.DeepCopy()
		if err := r.Client.Patch(ctx, pod, releaseFinalizer); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("releasing Pod %s of a gone launcher Job: %w", p.Name, err))
			continue
		}
		var gone types.UID
		if ref := metav1.GetControllerOf(p); ref != nil {
			gone = ref.UID
		}
		ctrl.LoggerFrom(ctx).Info("Released a Pod of a gone launcher Job from the Job controller's finalizer",
			"pod", klog.KObj(p), "jobUID", gone)
	}
	return errors.Join(errs...)
}
