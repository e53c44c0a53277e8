package main

import (
	"context"
	"errors"
	"testing"
)

// A manager that ignores its context until released, as controller-runtime
// does while it waits for a cache that never syncs.
func stuckStart(release <-chan struct{}) func(context.Context) error {
	return func(context.Context) error {
		<-release
		return errors.New("released")
	}
}

func TestStartUntilStoppedReturnsAtOnceBeforeTheCachesSync(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	release := make(chan struct{})
	defer close(release)
	if err := startUntilStopped(ctx, stuckStart(release), make(chan struct{})); err != nil {
		t.Errorf("startUntilStopped: %v, want nil for a stop asked for", err)
	}
}

func TestStartUntilStoppedWaitsForTheManagerOnceSynced(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	synced := make(chan struct{})
	close(synced)
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- startUntilStopped(ctx, stuckStart(release), synced) }()
	cancel()
	select {
	case err := <-done:
		t.Fatalf("returned %v before the manager stopped", err)
	default:
	}
	close(release)
	if err := <-done; err == nil || err.Error() != "released" {
		t.Errorf("startUntilStopped: %v, want the manager's own error", err)
	}
}

func TestStartUntilStoppedReturnsTheManagersError(t *testing.T) {
	boom := errors.New("boom")
	err := startUntilStopped(context.Background(), func(context.Context) error { return boom }, make(chan struct{}))
	if !errors.Is(err, boom) {
		t.Errorf("startUntilStopped: %v, want %v", err, boom)
	}
}

func TestReadyOnlyOnceTheCachesSynced(t *testing.T) {
	synced := make(cacheSynced)
	if err := synced.Check(nil); err == nil {
		t.Fatal("ready before the caches synced")
	}
	if err := synced.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := synced.Check(nil); err != nil {
		t.Errorf("not ready once the caches synced: %v", err)
	}
}
