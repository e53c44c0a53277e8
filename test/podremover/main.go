// Command podremover plays the last part of a kubelet on the benchmark
// cluster (hack/bench/up.sh starts it beside kwok): a deleted Pod that no
// finalizer holds is removed, with grace period 0 and the Pod's UID as a
// precondition, so a removal meant for one Pod never takes another of the
// same name.
//
// kwok's pod-delete stage removes by name only, and retries a failed
// removal with the Pod it first saw. Under load a retry removed the next
// Pod of that name, whose removal failed and was retried in turn: the
// operator's replacement of worker 2 of job c028 was removed 45 times in a
// row and the job restarted each time (make chaos, seed 932738). A kubelet
// sends the UID.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// pod names one Pod, by UID too.
type pod struct {
	namespace, name string
	uid             types.UID
}

func main() {
	kubeconfig := flag.String("kubeconfig", "/var/lib/mpi-operator-bench/admin.conf", "kubeconfig of the benchmark cluster")
	workers := flag.Int("workers", 20, "removals in flight")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, *kubeconfig, *workers)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "podremover:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string, workers int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// As fast as kwok's own client: removals must not lag behind a
	// benchmark's thousands of deletions.
	cfg.QPS, cfg.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[pod]())
	defer q.ShutDown()
	factory := informers.NewSharedInformerFactory(cs, 0)
	enqueue := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && p.DeletionTimestamp != nil && len(p.Finalizers) == 0 {
			q.Add(pod{p.Namespace, p.Name, p.UID})
		}
	}
	if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for range workers {
		go func() {
			for remove(ctx, cs, q) {
			}
		}()
	}
	<-ctx.Done()
	return nil
}

// remove takes one Pod off the queue and removes it; it reports false once
// the queue shuts down.
func remove(ctx context.Context, cs kubernetes.Interface, q workqueue.TypedRateLimitingInterface[pod]) bool {
	p, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(p)
	err := cs.CoreV1().Pods(p.namespace).Delete(ctx, p.name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &p.uid},
	})
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Removed, gone already, or the name now holds another Pod.
		q.Forget(p)
	default:
		// The API server may be restarting (make chaos): try again.
		q.AddRateLimited(p)
	}
	return true
}
