package controller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
	"github.com/mpi-operator/mpi-operator/internal/sshkey"
)

// getOwned reads a child into obj. It reports false when the child does
// not exist, and an error when it exists but belongs to someone else: the
// controller never adopts or overwrites an object the job does not
// control (one upstream's operator made for the job, it does adopt:
// create).
func (r *Reconciler) getOwned(ctx context.Context, job *kubeflow.MPIJob, name string, obj client.Object) (bool, error) {
	err := r.Client.Get(ctx, objectKey(job, name), obj)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("getting %T %s: %w", obj, name, err)
	case !metav1.IsControlledBy(obj, job):
		return false, fmt.Errorf("%T %s exists and is not controlled by this MPIJob", obj, name)
	}
	return true, nil
}

// create creates a child of the job. AlreadyExists is success when the
// object is ours (a stale cache hid our own earlier creation), and an error
// when it is not: the cache only holds objects labelled as ours, so a
// foreign object of the same name would otherwise go unnoticed forever.
// An object controlled by the job but made by upstream's operator (an
// operator swap mid-job) lacks the labels our cache selects by: it is
// adopted by giving it those labels. Either way obj is then the live
// object, not the one we meant to make.
func (r *Reconciler) create(ctx context.Context, job *kubeflow.MPIJob, obj client.Object) error {
	err := r.Client.Create(ctx, obj)
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
	}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return fmt.Errorf("reading existing %T %s: %w", obj, obj.GetName(), err)
	}
	if !metav1.IsControlledBy(obj, job) {
		return fmt.Errorf("%T %s exists and is not controlled by this MPIJob", obj, obj.GetName())
	}
	return r.adopt(ctx, obj, builder.JobLabels(job))
}

// adopt adds the labels our cache selects by to a child the job controls,
// so that the cache sees it from now on.
func (r *Reconciler) adopt(ctx context.Context, live client.Object, want map[string]string) error {
	labels := maps.Clone(live.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	changed := false
	for k, v := range want {
		if labels[k] != v {
			labels[k], changed = v, true
		}
	}
	if !changed {
		return nil
	}
	patch := client.MergeFromWithOptions(live.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	live.SetLabels(labels)
	if err := r.Client.Patch(ctx, live, patch); err != nil {
		return fmt.Errorf("adopting %T %s: %w", live, live.GetName(), err)
	}
	ctrl.LoggerFrom(ctx).Info("Adopted a child made by another controller of this MPIJob", "kind", fmt.Sprintf("%T", live), "name", live.GetName())
	return nil
}

// ensureFirstChildren makes what the workers need before they exist, at
// once: neither the Secret, the Service nor the ConfigMap needs another,
// and each is a round trip before the first worker. It returns the
// public key, which the job's known_hosts pins. The key pair is made once
// (the Secret is immutable); a Secret made by an older version of this
// operator or by upstream's has the same two keys, so its jobs keep theirs.
//
// The ConfigMap is made here only beside a new Secret, pinning the key
// just made; a job whose Secret exists gets it from ensureConfigMap. When
// the Secret turned out to exist already (a stale cache hid it), the
// ConfigMap pins a key nobody holds: it is rewritten with the Secret's
// before any worker mounts it.
func (r *Reconciler) ensureFirstChildren(ctx context.Context, s *state, kids *children) ([]byte, error) {
	job := s.job
	secret := &corev1.Secret{}
	found, err := r.getOwned(ctx, job, builder.SSHSecretName(job), secret)
	if err != nil {
		return nil, err
	}
	steps := []func() error{func() error { return r.ensureService(ctx, s) }}
	var made []byte
	if !found {
		priv, pub, err := sshkey.Generate()
		if err != nil {
			return nil, err
		}
		made = pub
		// After create, secret is the live one: when a stale cache hid it,
		// the key to pin is the one it holds, not the one just made.
		secret = builder.SSHSecret(job, priv, pub)
		steps = append(steps,
			func() error { return r.create(ctx, job, secret) },
			func() error { return r.ensureConfigMap(ctx, s, kids, pub) })
	}
	if err := concurrently(steps...); err != nil {
		return nil, err
	}
	s.configMapDone = made != nil
	key := secret.Data[builder.SSHPublicKeyKey]
	if made != nil && !bytes.Equal(key, made) {
		if err := r.rewriteConfigMap(ctx, s, kids, key); err != nil {
			return nil, err
		}
	}
	return key, nil
}

// rewriteConfigMap writes the ConfigMap as the job wants it now over the
// live one, which the cache may not show yet.
func (r *Reconciler) rewriteConfigMap(ctx context.Context, s *state, kids *children, publicKey []byte) error {
	want := builder.ConfigMap(s.job, kids.runningWorkers(int(s.job.Workers())), publicKey, r.Options)
	live := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), live); err != nil {
		return fmt.Errorf("reading ConfigMap %s: %w", want.Name, err)
	}
	if !metav1.IsControlledBy(live, s.job) {
		return fmt.Errorf("ConfigMap %s exists and is not controlled by this MPIJob", live.Name)
	}
	live.Data = want.Data
	if err := r.Client.Update(ctx, live); err != nil {
		return fmt.Errorf("updating ConfigMap %s: %w", live.Name, err)
	}
	return nil
}

// concurrently runs the steps at once and joins their errors. It is for
// steps that need nothing from one another: each is a round trip on the
// way to the job's start, and in a row they add up.
func concurrently(steps ...func() error) error {
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i, step := range steps {
		wg.Go(func() { errs[i] = step() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ensureService makes the headless Service, and notes whether it selects
// the job's Pods (one made by upstream's operator, or by a version of
// this one before it published them itself). Its spec never changes.
func (r *Reconciler) ensureService(ctx context.Context, s *state) error {
	svc := &corev1.Service{}
	found, err := r.getOwned(ctx, s.job, builder.ServiceName(s.job), svc)
	if err != nil {
		return err
	}
	if !found {
		// After create, svc is the live one: adopted from upstream's
		// operator, it may select.
		svc = builder.Service(s.job)
		if err := r.create(ctx, s.job, svc); err != nil {
			return err
		}
	}
	s.serviceSelects = len(svc.Spec.Selector) > 0
	return nil
}

// ensureConfigMap makes the hostfile ConfigMap, and rewrites it when the
// workers or the running ones changed. A change of the running workers
// alone (discover_hosts.sh) is paced like count-only status writes, so
// a large job starting does not rewrite it once per worker.
func (r *Reconciler) ensureConfigMap(ctx context.Context, s *state, kids *children, publicKey []byte) error {
	job := s.job
	if s.configMapDone {
		return nil
	}
	want := builder.ConfigMap(job, kids.runningWorkers(int(job.Workers())), publicKey, r.Options)
	have := &corev1.ConfigMap{}
	found, err := r.getOwned(ctx, job, want.Name, have)
	if err != nil {
		return err
	}
	if !found {
		if err := r.create(ctx, job, want); err != nil {
			return err
		}
		r.mem.discoverPace.wrote(jobKey(job), s.now.Time, false)
		return nil
	}
	listed := keepOutStoppingWorkers(s, kids, r.Options, want)
	if err := r.noteHostfileWorkers(ctx, job, listed, have.Data[builder.HostfileKey] != want.Data[builder.HostfileKey]); err != nil {
		return err
	}
	if maps.Equal(have.Data, want.Data) {
		return nil
	}
	runningOnly := onlyDiscoverHostsDiffers(have.Data, want.Data)
	// A worker that stopped running leaves discover_hosts.sh at once:
	// elastic Horovod must stop using it, and a worker it lists whose Pod
	// is gone restarts the job (firstDisruptionSince).
	if runningOnly && !dropsHosts(have.Data[builder.DiscoverHostsKey], want.Data[builder.DiscoverHostsKey]) {
		if !kids.launcherRunning && !kids.allWorkers(int(job.Workers()), isRunning) {
			// No launcher runs it yet: it gets the list once every
			// worker runs, not each step on the way.
			return nil
		}
		if wait := r.mem.discoverPace.due(jobKey(job), s.now.Time); wait > 0 {
			s.requeueAfter(wait)
			return nil
		}
	}
	have.Data = want.Data
	if err := r.Client.Update(ctx, have); err != nil {
		return fmt.Errorf("updating ConfigMap %s: %w", have.Name, err)
	}
	r.mem.discoverPace.wrote(jobKey(job), s.now.Time, runningOnly)
	return nil
}

// onlyDiscoverHostsDiffers reports whether two ConfigMaps' data differ in
// discover_hosts.sh alone: the running workers, and nothing the workers
// need before they start, such as known_hosts.
func onlyDiscoverHostsDiffers(have, want map[string]string) bool {
	a, b := maps.Clone(have), maps.Clone(want)
	delete(a, builder.DiscoverHostsKey)
	delete(b, builder.DiscoverHostsKey)
	return maps.Equal(a, b)
}

// keepOutStoppingWorkers leaves out of the wanted hostfile the workers
// whose Pod is still stopping and that the hostfile in place does not
// list (AnnotationHostfileWorkers): after a scale-down and up again, the
// Pod the scale-down removed. So a stopping worker the hostfile lists was
// taken from the running attempt, and only that restarts the job
// (firstDisruptionSince). The new attempt waits for such Pods anyway
// (previousAttemptStopping); the line comes back once the Pod is gone. It
// returns the workers the wanted hostfile lists.
func keepOutStoppingWorkers(s *state, kids *children, opts builder.Options, want *corev1.ConfigMap) jobrecord.Indices {
	recorded, ok := jobrecord.HostfileWorkers(s.job)
	var listed jobrecord.Indices
	drop := map[string]bool{}
	for i := range int(s.job.Workers()) {
		if p := kids.workers[i]; ok && p != nil && isTerminating(p) && !recorded.Contains(i) {
			drop[builder.HostName(s.job, p.Name, opts)] = true
			continue
		}
		listed = listed.Append(i)
	}
	if len(drop) > 0 {
		want.Data[builder.HostfileKey] = builder.HostfileWithout(want.Data[builder.HostfileKey], drop)
	}
	return listed
}

// noteHostfileWorkers records on the MPIJob the workers the hostfile is
// to list, before the ConfigMap is written and before a scale-down's
// workers are deleted (startAttempt comes after): a reconcile that sees
// such a worker stopping then also sees that the hostfile no longer
// lists it. A job whose hostfile was never rewritten (changes is false,
// nothing recorded) needs no record: its hostfile lists every worker.
func (r *Reconciler) noteHostfileWorkers(ctx context.Context, job *kubeflow.MPIJob, listed jobrecord.Indices, changes bool) error {
	recorded, ok := jobrecord.HostfileWorkers(job)
	if ok && slices.Equal(recorded, listed) || !ok && !changes {
		return nil
	}
	return r.recordHostfileWorkers(ctx, job, listed)
}

// dropsHosts reports whether discover_hosts.sh script to lists fewer of the
// hosts of script from.
func dropsHosts(from, to string) bool {
	kept := map[string]bool{}
	for _, h := range builder.DiscoveredHosts(to) {
		kept[h] = true
	}
	for _, h := range builder.DiscoveredHosts(from) {
		if !kept[h] {
			return true
		}
	}
	return false
}
