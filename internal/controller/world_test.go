package controller

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

// A world is what the cluster holds for a job when a reconcile starts,
// decoded from the fuzzer's bytes: the job's status, and its children in
// any state the kubelet, the Job controller, a user or another controller
// could leave them in (any phase, ready or not, disrupted, terminating,
// exited with any code, made by someone else), or absent.

// worldSource reads choices from the fuzzer's bytes; once they run out,
// every choice is the first.
type worldSource struct{ data []byte }

func (s *worldSource) pick(n int) int {
	if len(s.data) == 0 {
		return 0
	}
	b := s.data[0]
	s.data = s.data[1:]
	return int(b) % n
}

func pickOf[T any](s *worldSource, values ...T) T { return values[s.pick(len(values))] }

// worldStart is the fake clock's time when the world is made.
var worldStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at picks a time around worldStart: long ago, recently, now, or not yet.
func (s *worldSource) at() metav1.Time {
	return metav1.NewTime(worldStart.Add(pickOf(s, -time.Hour, -90*time.Second, -time.Second, 0, time.Second)))
}

func (s *worldSource) optionalTime() *metav1.Time {
	if s.pick(2) == 0 {
		return nil
	}
	return ptr.To(s.at())
}

// keep is the finalizer that holds a terminating object in the fake
// client, which refuses objects with a deletionTimestamp and none.
const keep = "fuzz.example.com/keep"

// meta makes an object terminating, foreign (no controller) or, most
// often, neither.
func (s *worldSource) meta(m *metav1.ObjectMeta, uid string) {
	m.UID = types.UID(uid)
	m.CreationTimestamp = metav1.NewTime(worldStart.Add(-2 * time.Hour))
	switch s.pick(6) {
	case 4:
		m.DeletionTimestamp = ptr.To(s.at())
		m.DeletionGracePeriodSeconds = ptr.To[int64](30)
		m.Finalizers = []string{keep}
	case 5:
		m.OwnerReferences = nil
	}
}

// makeWorld decodes the job's status and children. job is the stored
// job; children are built only when its defaulted copy is valid, as the
// controller would never have made them otherwise.
func makeWorld(job *kubeflow.MPIJob, data []byte) []client.Object {
	s := &worldSource{data: data}
	for _, t := range []kubeflow.JobConditionType{kubeflow.JobCreated, kubeflow.JobRunning, kubeflow.JobRestarting,
		kubeflow.JobSucceeded, kubeflow.JobSuspended, kubeflow.JobFailed} {
		if st := pickOf(s, corev1.ConditionStatus(""), corev1.ConditionTrue, corev1.ConditionFalse); st != "" {
			job.Status.Conditions = append(job.Status.Conditions, kubeflow.JobCondition{
				Type: t, Status: st, Reason: "Fuzzed", LastTransitionTime: s.at(), LastUpdateTime: s.at(),
			})
		}
	}
	job.Status.StartTime = s.optionalTime()
	job.Status.CompletionTime = s.optionalTime()
	if s.pick(8) == 7 {
		job.DeletionTimestamp = ptr.To(s.at())
		job.Finalizers = []string{keep}
	}
	objs := []client.Object{job}

	d := job.DeepCopy()
	kubeflow.SetDefaults(d)
	if len(kubeflow.Validate(d)) > 0 {
		return objs
	}
	opts := builder.Options{ClusterDomain: "cluster.local"}
	// One index past the last worker: a surplus Pod left by a scale down.
	// A job with no Worker replica spec (the launcher runs every rank) has
	// no template to build one from.
	_, hasWorkers := d.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker]
	for i := range int(d.Workers()) + 1 {
		if !hasWorkers || s.pick(3) == 0 {
			continue
		}
		objs = append(objs, s.pod(builder.WorkerPod(d, i, opts), fmt.Sprintf("worker-%d", i)))
	}
	if s.pick(3) != 0 {
		l := builder.LauncherJob(d, s.pick(2) == 0, opts)
		s.meta(&l.ObjectMeta, "launcher")
		s.jobStatus(&l.Status)
		objs = append(objs, l)
		for i := range s.pick(3) {
			objs = append(objs, s.pod(launcherPod(d, l, i), fmt.Sprintf("launcher-pod-%d", i)))
		}
	}
	for _, o := range []client.Object{
		builder.SSHSecret(d, []byte("private"), []byte("public")),
		builder.Service(d),
		builder.ConfigMap(d, nil, []byte("public"), opts),
	} {
		switch s.pick(4) {
		case 0:
			continue
		case 1:
			o.SetOwnerReferences(nil)
		}
		o.SetUID(types.UID(fmt.Sprintf("%T", o)))
		objs = append(objs, o)
	}
	return objs
}

// launcherPod is Pod i of the launcher Job, as the Job controller makes it.
func launcherPod(job *kubeflow.MPIJob, l *batchv1.Job, i int) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: *l.Spec.Template.ObjectMeta.DeepCopy(),
		Spec:       *l.Spec.Template.Spec.DeepCopy(),
	}
	p.Name = fmt.Sprintf("%s-%d", builder.LauncherName(job), i)
	p.Namespace = job.Namespace
	p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(l, batchv1.SchemeGroupVersion.WithKind("Job"))}
	return p
}

// pod gives a Pod the status the kubelet (or an eviction) could leave.
func (s *worldSource) pod(p *corev1.Pod, uid string) *corev1.Pod {
	s.meta(&p.ObjectMeta, uid)
	st := &p.Status
	st.Phase = pickOf(s, corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown)
	if c := pickOf(s, corev1.ConditionStatus(""), corev1.ConditionTrue, corev1.ConditionFalse); c != "" {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: c})
	}
	if s.pick(4) == 0 {
		st.Conditions = append(st.Conditions, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", LastTransitionTime: s.at(),
		})
	}
	st.Reason = pickOf(s, "", "", "Evicted", "NodeLost", "Preempting")
	cs := corev1.ContainerStatus{Name: "c", RestartCount: pickOf[int32](s, 0, 0, 2)}
	if code := pickOf[int32](s, -1, 0, 1, 137); code >= 0 {
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: s.at()}
	}
	st.ContainerStatuses = []corev1.ContainerStatus{cs}
	return p
}

// jobStatus gives the launcher Job the status the Job controller could
// write, consistent or not.
func (s *worldSource) jobStatus(st *batchv1.JobStatus) {
	st.StartTime = s.optionalTime()
	st.Active = pickOf[int32](s, 0, 1)
	st.Ready = pickOf(s, nil, ptr.To[int32](0), ptr.To[int32](1))
	st.Failed = pickOf[int32](s, 0, 1, 7)
	st.Succeeded = pickOf[int32](s, 0, 1)
	for _, t := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed, batchv1.JobSuccessCriteriaMet,
		batchv1.JobFailureTarget, batchv1.JobSuspended} {
		if s.pick(4) == 0 {
			st.Conditions = append(st.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: "Fuzzed"})
		}
	}
	if s.pick(4) == 0 {
		st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Failed: []types.UID{"launcher-pod-0"}}
	}
	st.CompletionTime = s.optionalTime()
}
