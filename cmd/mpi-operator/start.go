package main

import (
	"context"
	"errors"
	"net/http"

	ctrl "sigs.k8s.io/controller-runtime"
)

// cacheSynced is a runnable the manager starts once its caches have
// synced (it starts the runnables that need no leader after them): it
// closes synced.
type cacheSynced chan struct{}

func (c cacheSynced) Start(context.Context) error {
	close(c)
	return nil
}

func (cacheSynced) NeedLeaderElection() bool { return false }

// Check is the readiness check: ready once the caches have synced, the
// informers of every watched kind among them, so a replica counted ready
// can reconcile at once, and a rollout stops the old one only then.
func (c cacheSynced) Check(*http.Request) error {
	select {
	case <-c:
		return nil
	default:
		return errors.New("the caches have not synced yet")
	}
}

// startUntilStopped runs start (the manager's) until it returns. A stop
// asked for before synced is closed ends it at once: controller-runtime
// (v0.25.3) spins on the cancelled context while it waits for a cache
// that never syncs (kubernetes-sigs/controller-runtime#3440), and nothing
// has started then that would need a graceful stop: no reconcile, no
// Lease. After synced, the manager's own graceful stop runs.
func startUntilStopped(ctx context.Context, start func(context.Context) error, synced <-chan struct{}) error {
	stopped := make(chan error, 1)
	go func() { stopped <- start(ctx) }()
	select {
	case err := <-stopped:
		return err
	case <-ctx.Done():
	}
	select {
	case <-synced:
		return <-stopped
	case err := <-stopped:
		return err
	default:
		ctrl.Log.Info("Stopping before the caches synced; nothing had started")
		return nil
	}
}
