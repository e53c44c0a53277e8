package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/controller"
	"github.com/mpi-operator/mpi-operator/test/internal/benchcluster"
)

// finalStates compares each job's final condition with the planned one.
// It returns the count of jobs right, and one line per job that is not.
func finalStates(jobs []*kubeflow.MPIJob, planned map[string]plannedJob) (int, map[kubeflow.JobConditionType]int, []string) {
	right, got := 0, map[kubeflow.JobConditionType]int{}
	var wrong []string
	seen := map[string]bool{}
	for _, job := range jobs {
		p, ok := planned[job.Name]
		if !ok {
			continue
		}
		seen[job.Name] = true
		f := final(job)
		got[f]++
		if f == p.want() {
			right++
			continue
		}
		state := string(f)
		if state == "" {
			state = "not final (" + conditions(job) + ")"
		}
		wrong = append(wrong, fmt.Sprintf("%s: %s, want %s", job.Name, state, p.want()))
	}
	for name := range planned {
		if !seen[name] {
			wrong = append(wrong, name+": MPIJob missing")
		}
	}
	sort.Strings(wrong)
	return right, got, wrong
}

func conditions(job *kubeflow.MPIJob) string {
	var out []string
	for _, c := range job.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			out = append(out, string(c.Type))
		}
	}
	return strings.Join(out, ",")
}

// restartRecord mirrors the value of controller.AnnotationRestart.
type restartRecord struct {
	Replaces     types.UID `json:"replaces"`
	BackoffLimit int32     `json:"backoffLimit"`
	Count        int32     `json:"count"`
	Cause        string    `json:"cause"`
}

// restartResult is what the restart records say of the run.
type restartResult struct {
	Jobs, Restarts int
	// Right are the records that hold: the launcher Job in place is not
	// the one replaced and has the recorded backoffLimit, and a job that
	// succeeds had all its retries given back.
	Right int
	Wrong []string
	// Overtaken are restarts whose launcher Job completed before the
	// restart was carried out.
	Overtaken int
	// Lost are the jobs that lost a worker while their launcher ran;
	// LostRestarted those of them that restarted.
	Lost, LostRestarted int
}

func jobComplete(l *batchv1.Job) bool {
	for _, c := range l.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// checkRestarts reads every job's restart record and its launcher Job.
func checkRestarts(ctx context.Context, e *env, jobs []*kubeflow.MPIJob, planned map[string]plannedJob, lost map[string]bool) (restartResult, error) {
	var res restartResult
	for _, job := range jobs {
		raw, ok := job.Annotations[controller.AnnotationRestart]
		if lost[job.Name] {
			res.Lost++
			if ok {
				res.LostRestarted++
			}
		}
		if !ok {
			continue
		}
		var rec restartRecord
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			res.Wrong = append(res.Wrong, fmt.Sprintf("%s: unreadable record %q", job.Name, raw))
			continue
		}
		res.Jobs++
		res.Restarts += int(rec.Count)
		l := &batchv1.Job{}
		err := e.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: builder.LauncherJobName(job, rec.Count)}, l)
		switch {
		case apierrors.IsNotFound(err):
			// The launcher the restart replaces may have completed before
			// any operator carried the restart out (its leader killed just
			// after writing the record): no new Job is made then, and the
			// outcome stands, as below.
			done, err := replacedCompleted(ctx, e, job, rec)
			switch {
			case err != nil:
				return res, err
			case done:
				res.Overtaken++
			default:
				res.Wrong = append(res.Wrong, fmt.Sprintf("%s: restarted (%s) and has no launcher Job", job.Name, rec.Cause))
			}
			continue
		case err != nil:
			return res, err
		}
		p := planned[job.Name]
		switch {
		case l.UID == rec.Replaces && jobComplete(l):
			// It completed before the restart was carried out: the
			// operator lets that outcome stand, by design.
			res.Overtaken++
		case l.UID == rec.Replaces:
			res.Wrong = append(res.Wrong, fmt.Sprintf("%s: the launcher Job in place is the one the restart replaced", job.Name))
		case ptr.Deref(l.Spec.BackoffLimit, 6) != rec.BackoffLimit:
			res.Wrong = append(res.Wrong, fmt.Sprintf("%s: launcher Job backoffLimit %d, record says %d",
				job.Name, ptr.Deref(l.Spec.BackoffLimit, 6), rec.BackoffLimit))
		case !p.fails && rec.BackoffLimit != p.backoff:
			res.Wrong = append(res.Wrong, fmt.Sprintf("%s: its mpirun never fails, yet the restart left backoffLimit %d of %d",
				job.Name, rec.BackoffLimit, p.backoff))
		default:
			res.Right++
		}
	}
	sort.Strings(res.Wrong)
	return res, nil
}

// replacedCompleted reports whether the launcher Job a restart replaces
// is still there, under either name the operator looks it up by (the
// attempt before, or upstream's), and complete.
func replacedCompleted(ctx context.Context, e *env, job *kubeflow.MPIJob, rec restartRecord) (bool, error) {
	for _, name := range []string{builder.LauncherJobName(job, rec.Count-1), builder.LauncherName(job)} {
		l := &batchv1.Job{}
		err := e.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, l)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return false, err
		case l.UID == rec.Replaces:
			return jobComplete(l), nil
		}
	}
	return false, nil
}

// childKinds are the kinds the operator makes, each with our labels.
var childKinds = []struct {
	name string
	list client.ObjectList
}{
	{"Pod", &corev1.PodList{}}, {"Job", &batchv1.JobList{}}, {"Service", &corev1.ServiceList{}},
	{"ConfigMap", &corev1.ConfigMapList{}}, {"Secret", &corev1.SecretList{}},
	{"EndpointSlice", &discoveryv1.EndpointSliceList{}},
}

// orphans deletes every MPIJob of the run (background propagation, as
// kubectl does), then waits for kube-controller-manager's garbage
// collector to remove their children, until none is left or their count
// has not fallen for settle (the collector works at its client's 20
// requests/s: thousands of children take minutes), at most bound. An
// orphan is a child with the operator's labels still there then: its
// owner is gone and nothing removes it.
func orphans(ctx context.Context, e *env, settle, bound time.Duration) ([]string, error) {
	err := e.c.DeleteAllOf(ctx, &kubeflow.MPIJob{}, client.InNamespace(namespace),
		client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil {
		return nil, fmt.Errorf("deleting the MPIJobs: %w", err)
	}
	deadline := time.Now().Add(bound)
	var left []string
	fewest, fell := -1, time.Now()
	for {
		left = left[:0]
		var jobs kubeflow.MPIJobList
		if err := e.c.List(ctx, &jobs, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		for _, j := range jobs.Items {
			left = append(left, "MPIJob/"+j.Name)
		}
		for _, k := range childKinds {
			if err := e.c.List(ctx, k.list, client.InNamespace(namespace),
				client.MatchingLabels{kubeflow.LabelOperatorName: kubeflow.OperatorName}); err != nil {
				return nil, err
			}
			for _, name := range names(k.list) {
				left = append(left, k.name+"/"+name)
			}
		}
		if fewest < 0 || len(left) < fewest {
			fewest, fell = len(left), time.Now()
		}
		if len(left) == 0 || time.Since(fell) > settle || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	sort.Strings(left)
	return left, nil
}

// names names the objects of l, with what tells why one is still there:
// its deletion, the finalizers that hold it, its owners.
func names(l client.ObjectList) []string {
	objs, err := meta.ExtractList(l)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		m, err := meta.Accessor(o)
		if err != nil {
			continue
		}
		var why []string
		if t := m.GetDeletionTimestamp(); t != nil {
			why = append(why, "deleting since "+t.Format(time.TimeOnly))
		}
		if f := m.GetFinalizers(); len(f) > 0 {
			why = append(why, "finalizers "+strings.Join(f, ","))
		}
		for _, ref := range m.GetOwnerReferences() {
			why = append(why, fmt.Sprintf("owner %s/%s %s", ref.Kind, ref.Name, ref.UID))
		}
		if p, ok := o.(*corev1.Pod); ok {
			why = append(why, "phase "+string(p.Status.Phase))
		}
		name := m.GetName()
		if len(why) > 0 {
			name += " (" + strings.Join(why, "; ") + ")"
		}
		out = append(out, name)
	}
	return out
}

// createCounts are the operator's create requests of one resource in the
// run's namespace, from the audit log.
type createCounts struct {
	Created int
	// Duplicates are creates the API server refused with AlreadyExists:
	// the operator tried to make an object while one of that name was
	// still there, i.e. a second object for the same (job, index,
	// attempt). Names are deterministic, so a create that succeeds
	// always begins a new attempt.
	Duplicates int
	Names      []string
	// Other are creates refused for any other reason (throttling, the
	// API server stopping).
	Other int
}

// creates reads the operator's Pod and Job creates from the audit log.
func creates(a benchcluster.AuditLog, from int64) (pods, jobs createCounts, bad int, err error) {
	bad, err = a.Scan(from, func(ev benchcluster.AuditEvent) {
		r := ev.ObjectRef
		if ev.User.Username != benchcluster.OperatorUser || ev.Verb != "create" || r == nil ||
			r.Namespace != namespace || r.Subresource != "" || ev.ResponseStatus == nil {
			return
		}
		var c *createCounts
		switch {
		case r.Resource == "pods" && r.APIGroup == "":
			c = &pods
		case r.Resource == "jobs" && r.APIGroup == "batch":
			c = &jobs
		default:
			return
		}
		switch code := ev.ResponseStatus.Code; {
		case code >= 200 && code < 300:
			c.Created++
		case code == 409: // a create is refused with 409 only for AlreadyExists
			c.Duplicates++
			c.Names = append(c.Names, r.Name+" at "+ev.RequestReceived.Format("15:04:05.000"))
		default:
			c.Other++
		}
	})
	return pods, jobs, bad, err
}
