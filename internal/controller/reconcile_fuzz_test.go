package controller

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// A reconcile "loops hot" when the controller keeps working on a cluster
// where nothing but the controller acts. The fuzz target below runs the
// controller in such a cluster (the fake client: no kubelet, no Job
// controller, no user) and plays the work queue: a reconcile that wrote
// is followed at once by another (its writes make watch events), one
// that asked for a requeue by another when the fake clock has moved on by
// that much, one that failed by another after errorBackoff. The
// controller loops hot if
//
//   - it does not stop writing: more than maxWritingReconciles reconciles
//     make a write (a create, update, patch, delete or status write).
//     Nothing changes but what the controller itself did, so once it has
//     made the job's children and recorded what it sees, there is nothing
//     left to write; or
//   - it spins: two reconciles in a row write nothing, succeed and ask to
//     be called again sooner than minIdleRequeue. One short requeue is
//     fine (a deadline or a TTL may be a millisecond away); a second one
//     with nothing written in between is a timer going round.
//
// A reconcile that writes nothing, succeeds and asks for no requeue ends
// the run: the controller waits for the world to change. Reconciles that
// keep failing without writing (a foreign object holds a child's name)
// are retried with the queue's backoff, which is not a hot loop; the run
// ends after maxReconciles of them.
const (
	maxWritingReconciles = 10
	minIdleRequeue       = 100 * time.Millisecond
	maxReconciles        = 40
	errorBackoff         = time.Second
	// maxFuzzWorkers bounds the workers of a fuzzed job: more only
	// repeat the same Pods, and the fake client makes each one.
	maxFuzzWorkers = 6
)

// FuzzReconcileNeverLoopsHot reconciles a job (a base of testjob.Bases
// changed by testjob.Edit, valid or not: the fake client has no admission)
// whose status and children are decoded from world (makeWorld), until the
// controller comes to rest. It must never panic, never loop hot, never
// write for a job it must leave alone, and never change a cached Pod in
// place.
func FuzzReconcileNeverLoopsHot(f *testing.F) {
	bases := testjob.Bases()
	// Seeds: each base as it is created, and in a few worlds drawn at
	// random (fixed, so the seeds are the same in every run).
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range bases {
		f.Add(uint8(i), []byte(nil), []byte(nil))
		for range 3 {
			world := make([]byte, 64)
			for j := range world {
				world[j] = byte(rnd.IntN(256))
			}
			f.Add(uint8(i), []byte(nil), world)
		}
	}
	f.Fuzz(func(t *testing.T, base uint8, edits, world []byte) {
		job := bases[int(base)%len(bases)].DeepCopy()
		testjob.Edit(job, edits)
		job.Namespace, job.UID = "ns", "job"
		if w := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker]; w != nil && ptr.Deref(w.Replicas, 0) > maxFuzzWorkers {
			w.Replicas = ptr.To[int32](maxFuzzWorkers)
		}
		objs := makeWorld(job, world)
		leaveAlone := !job.IsManagedByUs() || job.DeletionTimestamp != nil
		runUntilRest(t, job, leaveAlone, objs...)
	})
}

// runUntilRest reconciles job over a fake client holding objs until the
// controller rests, and fails the test if it loops hot.
func runUntilRest(t *testing.T, job *kubeflow.MPIJob, leaveAlone bool, objs ...client.Object) {
	f, wrote := newRestFixture(t, objs...)
	cache := newPodCache(f)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}
	writing, shortIdle := 0, 0
	var history []string
	for range maxReconciles {
		wrote.reset()
		cache.fill(t, f)
		res, err := f.r.Reconcile(context.Background(), req)
		cache.check(t)
		writes := wrote.reset()
		history = append(history, describe(writes, res, err))
		switch {
		case len(writes) > 0 && leaveAlone:
			t.Fatalf("wrote %v for a job it must leave alone", writes)
		case len(writes) > 0:
			writing++
			shortIdle = 0
			if writing > maxWritingReconciles {
				t.Fatalf("still writing after %d reconciles of an unchanging world:\n%v", writing, history)
			}
		case err != nil:
			shortIdle = 0
			f.clock.SetTime(f.clock.Now().Add(errorBackoff))
		case res.RequeueAfter <= 0 && !res.Requeue: //nolint:staticcheck // Requeue is deprecated, and must stay unused.
			return
		case res.RequeueAfter < minIdleRequeue:
			shortIdle++
			if shortIdle >= 2 {
				t.Fatalf("spinning: reconciles that wrote nothing asked to run again within %v:\n%v", minIdleRequeue, history)
			}
			f.clock.SetTime(f.clock.Now().Add(res.RequeueAfter))
		default:
			shortIdle = 0
			f.clock.SetTime(f.clock.Now().Add(res.RequeueAfter))
		}
	}
}

// successes counts the writes the API accepted, by verb and kind: a
// refused create changes nothing (it is retried with the queue's
// backoff), unlike the fixture's writes, which count every attempt.
type successes struct {
	mu     sync.Mutex
	writes calls
}

func (s *successes) note(verb string, obj client.Object, err error) error {
	if err == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.writes[verb+" "+typeName(obj)]++
	}
	return err
}

// reset returns the writes counted since the last reset.
func (s *successes) reset() calls {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.writes
	s.writes = calls{}
	return w
}

// newRestFixture is a fixture whose successful writes are counted, and
// whose expectations learn of the controller's own Pod writes as soon as
// they are made, as the informer would tell them a moment later.
func newRestFixture(t *testing.T, objs ...client.Object) (*fixture, *successes) {
	var f *fixture
	wrote := &successes{writes: calls{}}
	observed := func(obj client.Object, seen func(job, pod string)) {
		if req, ok := ownerRequest(obj); ok && isPod(obj) {
			seen(req.String(), obj.GetName())
		}
	}
	f = newFixture(t, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			err := wrote.note("create", obj, c.Create(ctx, obj, opts...))
			if err == nil {
				observed(obj, f.r.Expectations.CreationObserved)
			}
			return err
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			err := wrote.note("delete", obj, c.Delete(ctx, obj, opts...))
			if err == nil {
				observed(obj, f.r.Expectations.DeletionObserved)
			}
			return err
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return wrote.note("update", obj, c.Update(ctx, obj, opts...))
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return wrote.note("patch", obj, c.Patch(ctx, obj, patch, opts...))
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return wrote.note("status", obj, c.SubResource(sub).Update(ctx, obj, opts...))
		},
	}, objs...)
	// The fake recorder blocks once it holds 100 events.
	f.r.Recorder = nil
	return f, wrote
}

func isPod(obj client.Object) bool {
	_, ok := obj.(*corev1.Pod)
	return ok
}

// describe is one reconcile, for the failure message.
func describe(writes calls, res ctrl.Result, err error) string {
	return fmt.Sprintf("writes %v, requeue after %v, error %v\n", map[string]int(writes), res.RequeueAfter, err)
}
