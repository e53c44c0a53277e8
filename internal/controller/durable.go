package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
)

// What must survive a failover is written to the API; everything the
// Reconciler holds in memory (memory.go) is a cache that a new leader
// rebuilds from the API or does without. The API holds, per job:
//   - the children themselves, under deterministic names, so a new leader
//     finds every one and never makes one twice;
//   - the MPIJob's status: conditions, startTime (what
//     activeDeadlineSeconds counts from), completionTime;
//   - the launcher Job: the retries the program has left (backoffLimit
//     less status.failed), its suspension;
//   - which workers the hostfile lists, in the AnnotationHostfileWorkers
//     annotation on the MPIJob, so a worker removed by a scale-down is told
//     from one lost to a disruption;
//   - a restart in progress, in the AnnotationRestart annotation below;
//   - how many workers the launcher Job's attempt was given, in the
//     AnnotationWorkers annotation on it.

// AnnotationRestart, on an MPIJob, records the latest whole-job restart
// (design §4.3) as JSON (jobrecord.Restart): the launcher Job it ends, the
// backoffLimit of the launcher Job that replaces it, and the nodes the
// next attempts keep off. It is written before the old launcher Job is
// deleted and acted on only once the cache shows it, so a leader that
// takes over between the deletion and the creation of the new Job, or a
// reconcile that reads a stale cache, still gives the new Job the retries
// the program had left rather than a full backoffLimit.
const AnnotationRestart = jobrecord.AnnotationRestart

// restartRecord is the value of AnnotationRestart.
type restartRecord = jobrecord.Restart

// restartOf reads the job's restart record; a missing or unreadable one
// (edited by hand) is none.
func restartOf(job *kubeflow.MPIJob) (restartRecord, bool) { return jobrecord.RestartOf(job) }

// recordRestart writes rec onto the MPIJob.
func (r *Reconciler) recordRestart(ctx context.Context, job *kubeflow.MPIJob, rec restartRecord) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encoding restart record: %w", err)
	}
	if err := r.annotate(ctx, job, AnnotationRestart, string(raw)); err != nil {
		return fmt.Errorf("recording restart on MPIJob: %w", err)
	}
	return nil
}

// AnnotationHostfileWorkers, on an MPIJob, lists the workers its hostfile
// lists (jobrecord.AnnotationHostfileWorkers).
const AnnotationHostfileWorkers = jobrecord.AnnotationHostfileWorkers

// recordHostfileWorkers writes the workers the hostfile is about to list
// onto the MPIJob.
func (r *Reconciler) recordHostfileWorkers(ctx context.Context, job *kubeflow.MPIJob, listed jobrecord.Indices) error {
	if err := r.annotate(ctx, job, AnnotationHostfileWorkers, listed.String()); err != nil {
		return fmt.Errorf("recording the hostfile's workers on MPIJob: %w", err)
	}
	return nil
}

// annotate sets one annotation of the MPIJob. Only the annotation is
// patched, on a copy: the response must not replace the defaulted spec the
// reconcile works with. The patch carries the resourceVersion the
// reconcile read, so a job changed since (a stale cache, another writer)
// refuses it and the decision is taken again on fresh data. The job takes
// the new resourceVersion, so this reconcile's status write does not
// conflict with its own patch.
func (r *Reconciler) annotate(ctx context.Context, job *kubeflow.MPIJob, key, value string) error {
	read, written := job.DeepCopy(), job.DeepCopy()
	metav1.SetMetaDataAnnotation(&written.ObjectMeta, key, value)
	patch := client.MergeFromWithOptions(read, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Patch(ctx, written, patch); err != nil {
		return err
	}
	job.Annotations, job.ResourceVersion = written.Annotations, written.ResourceVersion
	return nil
}

// AnnotationWorkers, on a launcher Job, is how many workers the job had
// when the Job was made: the workers of its attempt. A worker of a higher
// index came with a later scale-up; its Pod missing is no loss to the
// attempt.
const AnnotationWorkers = "mpi-operator.kubeflow.org/workers"

func recordWorkers(l *batchv1.Job, n int32) {
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[AnnotationWorkers] = strconv.Itoa(int(n))
}

// attemptWorkers reads AnnotationWorkers; a Job without it (made by an
// older operator) counts every worker as its.
func attemptWorkers(l *batchv1.Job) int {
	n, err := strconv.Atoi(l.Annotations[AnnotationWorkers])
	if err != nil {
		return math.MaxInt
	}
	return n
}
