package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/gang"
)

// Reconciler drives MPIJobs. Its dependencies are injected so that tests can
// run it against a fake client, a fake clock and a fake recorder.
type Reconciler struct {
	Client client.Client
	// APIReader reads around the cache, to tell whose an object is when a
	// create finds the name taken.
	APIReader    client.Reader
	Recorder     events.EventRecorder
	Clock        clock.PassiveClock
	Expectations *Expectations
	// Pods are the cache's Pod stores, read without copies (InJob); nil
	// lists through Client.
	Pods *PodStores
	// PodDeletes deletes Pods without reading back what was deleted
	// (ClientsetPods); nil deletes through Client.
	PodDeletes PodDeleter
	Options    builder.Options
	// CreateParallelism caps the Pod creations in flight for one job.
	CreateParallelism int
	// EndpointsPerSlice is how many endpoints one of a job's
	// EndpointSlices holds; zero means the API's limit.
	EndpointsPerSlice int
	// Gang groups each job's Pods for a gang scheduler; nil when gang
	// scheduling is off.
	Gang gang.Scheduler
	// Logs reads the end of a failed launcher's log for its event; nil
	// leaves it out.
	Logs LogReader
	// AvoidLostNodeFor is how long a job's Pods keep off a node a worker
	// was lost with (avoid.go); zero keeps off none.
	AvoidLostNodeFor time.Duration

	// mem is what is kept per job between reconciles: a cache, see
	// memory.go.
	mem memory
}

// state is the state of one reconcile: the defaulted job and the status
// being computed for it. Steps change status in memory; it is written once.
type state struct {
	job     *kubeflow.MPIJob
	status  *kubeflow.JobStatus
	now     metav1.Time
	requeue time.Duration
	// holdCounts: the launcher Job is finishing, so its outcome is about
	// to be written; count-only changes wait for that write.
	holdCounts bool
	// failedLog is the end of the failed launcher's log, for the event
	// of the Failed transition.
	failedLog logExcerpt
	// startup is how the attempt started, for the metrics of the
	// Running transition; nil unless this reconcile sets Running.
	startup *startup
	// configMapDone: ensureFirstChildren made the ConfigMap in this
	// reconcile; the cache may not show it yet.
	configMapDone bool
	// serviceSelects: the job's Service selects its Pods (upstream's, or
	// an older version's), so kube-controller-manager publishes them.
	serviceSelects bool
	// gateLauncher: the launcher Job about to be made holds its Pod back
	// until every worker has been made (startAttempt).
	gateLauncher bool
	// endpointWrites are the EndpointSlice writes publishEndpoints
	// decided on, sent beside the status write; it reports whether the
	// cache was behind. nil when there are none.
	endpointWrites func(context.Context) (bool, error)
}

// requeueAfter asks for another reconcile no later than d from now.
func (s *state) requeueAfter(d time.Duration) {
	if d > 0 && (s.requeue == 0 || d < s.requeue) {
		s.requeue = d
	}
}

// conflictRetry is how soon a reconcile whose status write conflicted runs
// again; the cache catches up within milliseconds.
const conflictRetry = 250 * time.Millisecond

// jobKey is the key the controller's memory (mem) and its expectations
// keep a job under.
func jobKey(job *kubeflow.MPIJob) string { return keyOf(job.Namespace, job.Name) }

// keyOf is jobKey for a job known only by its namespace and name, as the
// event predicates know it.
func keyOf(namespace, name string) string {
	return types.NamespacedName{Namespace: namespace, Name: name}.String()
}

// Least privilege: every verb below is one the controller uses. The
// integration suites run it with exactly these roles and fail on a granted
// verb they never saw requested, or on a request refused
// (test/integration/envtestutil/rbaccheck.go). mpijobs/finalizers lets
// owner references block deletion where OwnerReferencesPermissionEnforcement
// is on. MPIJobs are read from the cache only (list and watch, never get);
// get on children reads one past the cache when a create answers
// AlreadyExists. patch on mpijobs records a restart (durable.go); patch on
// pods releases a launcher Pod the Job controller left (stranded.go) and
// lets a first launcher Pod be scheduled once the workers are made
// (launcher.go).
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs,verbs=list;watch;patch;delete
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs/status,verbs=update
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;patch
// pods/log keeps the end of a failed launcher's log in its event.
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// patch on the other children adopts those upstream's operator made.
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch
// The operator publishes its Services' endpoints itself (endpoints.go).
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list;watch;create;update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// Leader election needs only a namespaced Role in the operator's own
// namespace (kustomize moves it with the install's namespace): client-go's
// LeaseLock gets, creates and updates its one Lease (releasing it on exit
// is an update too), and reports "became leader" as a core/v1 Event on that
// Lease, in the Lease's namespace. Each process's identity is unique and
// in the message, so the event never repeats and is never patched.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=mpi-operator,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",namespace=mpi-operator,resources=events,verbs=create

// Reconcile brings one MPIJob one step closer to its desired state.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	job := &kubeflow.MPIJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.String())
			forgetMetrics(req.Namespace, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting MPIJob: %w", err)
	}
	if !job.IsManagedByUs() || job.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	defer func() { r.mem.cool.done(req.String(), r.Clock.Now(), job.Workers(), isFinished(&job.Status)) }()
	if rv, ok := r.mem.writtenOver.Load(jobKey(job)); ok {
		if rv == job.ResourceVersion {
			log.V(4).Info("Waiting for the cache to observe this controller's status write")
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		r.mem.writtenOver.Delete(jobKey(job))
	}
	if !r.Expectations.Satisfied(jobKey(job)) {
		log.V(4).Info("Waiting for the cache to observe this controller's Pod writes")
		return ctrl.Result{RequeueAfter: expectationsTimeout}, nil
	}

	if isTrue(&job.Status, kubeflow.JobCreated) {
		// Every job the API says is created is shown, also by a leader
		// that took over after its Created transition.
		noteJobInfo(job)
	}
	observed := job.Status.DeepCopy()
	kubeflow.SetDefaults(job)
	s := &state{job: job, status: job.Status.DeepCopy(), now: metav1.NewTime(r.Clock.Now())}
	err := r.sync(ctx, s)
	if isFinished(s.status) {
		requeueForTTL(s)
	}
	// Pacing applies to a change of counts only: an unchanged status
	// writes nothing and needs no later reconcile to write it.
	onlyCounts := !equality.Semantic.DeepEqual(observed, s.status) && countsOnly(observed, s.status)
	if onlyCounts {
		if wait := r.mem.statusPace.due(jobKey(job), s.now.Time); wait > 0 || s.holdCounts {
			// Only counts changed, and the last write is recent or the
			// outcome is near: a later write carries them.
			s.status = observed
			s.requeueAfter(wait)
		}
	}
	werr, perr := r.write(ctx, s, observed, onlyCounts)
	if werr == nil {
		// What the API now holds, for the cooldown (deferred above).
		job.Status = *s.status
	}
	if werr != nil && apierrors.IsConflict(werr) && err == nil && perr == nil {
		// The cache had not caught up with our previous write, or the
		// user changed the job: expected, retried on fresh data.
		log.V(2).Info("Status write conflicted; retrying", "err", werr)
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	// Every error is returned, the sync's first: controller-runtime logs
	// them and retries with backoff.
	if err := errors.Join(err, werr, perr); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: s.requeue}, nil
}

// write sends the reconcile's last writes at once: the status and the
// EndpointSlices. Neither needs the other, and when the last Pod runs
// both are due: its address, and Running.
func (r *Reconciler) write(ctx context.Context, s *state, observed *kubeflow.JobStatus, onlyCounts bool) (statusErr, slicesErr error) {
	if s.endpointWrites == nil {
		return r.writeStatus(ctx, s, observed, onlyCounts), nil
	}
	var behind bool
	_ = concurrently(
		func() error { statusErr = r.writeStatus(ctx, s, observed, onlyCounts); return nil },
		func() error { behind, slicesErr = s.endpointWrites(ctx); return nil })
	if behind {
		// The cache was behind: the next reconcile reads it again. Pod
		// events may not bring one (the last worker may have started).
		s.requeueAfter(conflictRetry)
	}
	return statusErr, slicesErr
}

// sync runs the steps of a reconcile in order. A step returns early on an
// error, or when it ended the reconcile (done); what it decided is in
// s.status.
func (r *Reconciler) sync(ctx context.Context, s *state) error {
	if isFinished(s.status) {
		return r.reconcileFinished(ctx, s)
	}
	errs := kubeflow.Validate(s.job)
	if len(errs) == 0 {
		errs = builder.Validate(s.job, r.Options)
	}
	if len(errs) > 0 {
		r.markFailed(s, ReasonValidationError, errs.ToAggregate().Error())
		return nil
	}
	markCreated(s)
	kids, err := r.observe(ctx, s.job)
	if err != nil {
		return err
	}
	if err := errors.Join(r.endReplacedLauncher(ctx, kids), r.releaseStranded(ctx, s, kids)); err != nil {
		return err
	}
	publicKey, err := r.ensureFirstChildren(ctx, s, kids)
	if err != nil {
		return err
	}
	if err := r.publishEndpoints(ctx, s, kids, !s.serviceSelects); err != nil {
		return err
	}
	if s.job.IsSuspended() {
		return r.suspend(ctx, s, kids)
	}
	markStarted(s)
	if kids.launcherSucceeded {
		return r.succeed(ctx, s, kids)
	}
	if done, err := r.enforceDeadline(ctx, s, kids); done || err != nil {
		return err
	}
	if done, err := r.handleWorkerFailures(ctx, s, kids); done || err != nil {
		return err
	}
	if done, err := r.restartOnDisruption(ctx, s, kids); done || err != nil {
		return err
	}
	if err := r.ensureConfigMap(ctx, s, kids, publicKey); err != nil {
		return err
	}
	if formed, err := r.reconcileGang(ctx, s.job); !formed || err != nil {
		return err
	}
	if err := r.startAttempt(ctx, s, kids); err != nil {
		return err
	}
	updateReplicaStatuses(s, kids)
	r.readFailedLauncherLog(ctx, s, kids)
	updateProgress(s, kids)
	if err := r.recordLauncherFailure(ctx, s, kids); err != nil {
		return err
	}
	s.holdCounts = kids.launcher != nil && isJobFinishing(kids.launcher)
	if isFinished(s.status) {
		return r.cleanupPods(ctx, s, kids)
	}
	return nil
}

// countsOnly reports whether two statuses differ in the replica counts
// alone: no condition, time or anything else a user waits for.
func countsOnly(observed, computed *kubeflow.JobStatus) bool {
	a, b := observed.DeepCopy(), computed.DeepCopy()
	a.ReplicaStatuses, b.ReplicaStatuses = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}

// starting reports whether a job is on its way to Running: neither
// Running, finished nor suspended (a restart is starting again).
func starting(st *kubeflow.JobStatus) bool {
	return !isTrue(st, kubeflow.JobRunning) && !isFinished(st) && !isTrue(st, kubeflow.JobSuspended)
}

// writeStatus writes the computed status if it differs from what was
// observed, then announces the transitions. Update carries the
// resourceVersion read, so a concurrent writer makes it fail and the
// reconcile is retried on fresh data instead of overwriting.
func (r *Reconciler) writeStatus(ctx context.Context, s *state, observed *kubeflow.JobStatus, countsOnly bool) error {
	job, computed := s.job, s.status
	if equality.Semantic.DeepEqual(observed, computed) {
		return nil
	}
	now := metav1.NewTime(r.Clock.Now())
	computed.LastReconcileTime = &now
	// The answer is decoded into what was sent: a copy, as the slice
	// writes that go out beside it read the job.
	written := job.DeepCopy()
	written.Status = *computed
	over := job.ResourceVersion
	if err := r.Client.Status().Update(ctx, written); err != nil {
		return fmt.Errorf("writing status of MPIJob: %w", err)
	}
	job = written
	r.mem.writtenOver.Store(jobKey(job), over)
	if starting(computed) {
		r.mem.statusPace.wroteStarting(jobKey(job), now.Time, countsOnly)
	} else {
		r.mem.statusPace.wrote(jobKey(job), now.Time, countsOnly)
	}
	r.announce(ctx, job, transitions(observed, computed), s)
	recordLauncherAttempts(job.Namespace, observed, computed)
	return nil
}

// announce emits an event and updates the metrics for each transition.
// It runs only after the status write succeeded, so a conflict never
// double-counts.
func (r *Reconciler) announce(ctx context.Context, job *kubeflow.MPIJob, ts []transition, s *state) {
	log := ctrl.LoggerFrom(ctx)
	for _, t := range ts {
		eventType, note := corev1.EventTypeNormal, t.Message
		if t.Type == kubeflow.JobFailed {
			eventType, note = corev1.EventTypeWarning, s.failedLog.appendTo(t.Message)
		}
		log.Info("MPIJob condition changed", "mpijob", klog.KObj(job), "condition", t.Type, "reason", t.Reason, "resumed", t.Resumed)
		if r.Recorder != nil {
			r.Recorder.Eventf(job, nil, eventType, t.Reason, string(t.Type), "%s", note)
		}
		recordTransition(job, t, s.startup)
	}
}

func objectKey(job *kubeflow.MPIJob, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: job.Namespace, Name: name}
}
