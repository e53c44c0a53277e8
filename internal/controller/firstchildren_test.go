package controller

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// TestFirstChildrenAreMadeInOneRoundTrip: the Secret, the Service and the
// ConfigMap of a new job are created at once, each create held until all
// three have been sent, and every worker after them. Made one after
// another, as before, the first create would wait for the others for
// ever: the test gives up after a while and fails.
func TestFirstChildrenAreMadeInOneRoundTrip(t *testing.T) {
	var mu sync.Mutex
	inFlight := map[string]bool{}
	all := make(chan struct{})
	var order []string
	timedOut := false
	hold := func(obj client.Object) {
		kind := typeName(obj)
		mu.Lock()
		inFlight[kind] = true
		if len(inFlight) == 3 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(2 * time.Second):
			mu.Lock()
			timedOut = true
			mu.Unlock()
		}
	}
	job := testjob.MakeMPIJob("pi", "ns").Workers(2).Obj()
	f := newFixture(t, interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		switch obj.(type) {
		case *corev1.Secret, *corev1.Service, *corev1.ConfigMap:
			hold(obj)
		}
		mu.Lock()
		order = append(order, typeName(obj))
		mu.Unlock()
		return c.Create(ctx, obj, opts...)
	}}, job)
	f.reconcile(t, job)

	if timedOut {
		t.Fatalf("a create waited in vain for the others: the Secret, the Service and the ConfigMap were not in flight together (creates: %v)", order)
	}
	if len(order) < 3 {
		t.Fatalf("creates %v", order)
	}
	for _, kind := range order[:3] {
		if kind == typeName(&corev1.Pod{}) {
			t.Errorf("a worker was created before the ConfigMap it mounts: %v", order)
		}
	}
	if kh, key := knownHosts(t, f), secretPublicKey(t, f); key == "" || !strings.HasSuffix(kh, " "+key) {
		t.Errorf("known_hosts %q does not pin the Secret's key %q", kh, key)
	}
}
