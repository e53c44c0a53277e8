package main

// The kubelet's notice of a container's exit: what every Pod-based job
// pays after its program ends, and what the floor (floor.go) leaves out.
// The kubelet learns that a container exited at its next relist of the
// runtime's containers, once a second, and only then reports it; the Job
// controller, and any operator, read the exit from that report.

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// exitLine is the exit-notice Pod's last line before its container exits.
const exitLine = "EXITING"

// exitNotice runs one bare Pod of the image that prints exitLine and
// exits a second after it starts, and returns how long after that line
// (the kubelet's log timestamp) this process saw the container's exit in
// the Pod's status.
func exitNotice(ctx context.Context, cs kubernetes.Interface, image, ns string) (time.Duration, error) {
	if err := freshNamespace(ctx, cs, ns); err != nil {
		return 0, err
	}
	defer gone(cs, ns)
	pod := barePod(image, 0)
	pod.Name = "exit"
	pod.Spec.Containers[0].Command = []string{"sh", "-c", "sleep 1; echo " + exitLine}
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", pod.Name).String()})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	var seen time.Time
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return 0, fmt.Errorf("watch of the exit-notice Pod: %v", ev.Object)
		}
		if p, ok := ev.Object.(*corev1.Pod); ok && exited(p.Status.ContainerStatuses) {
			seen = time.Now()
			break
		}
	}
	if seen.IsZero() {
		return 0, fmt.Errorf("watch of the exit-notice Pod ended: %w", ctx.Err())
	}
	var last time.Time
	if err := logLines(ctx, cs, ns, pod.Name, pod.Spec.Containers[0].Name, func(t time.Time, text string) {
		if text == exitLine {
			last = t
		}
	}); err != nil {
		return 0, err
	}
	if last.IsZero() {
		return 0, fmt.Errorf("exit-notice Pod printed no %s line", exitLine)
	}
	return seen.Sub(last), nil
}
