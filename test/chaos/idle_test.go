package main

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

func TestWorkLeft(t *testing.T) {
	running := []kubeflow.JobCondition{{Type: kubeflow.JobRunning, Status: corev1.ConditionTrue}}
	job := func(suspend bool, conds ...kubeflow.JobCondition) *kubeflow.MPIJob {
		j := plannedJob{name: "c001", workers: 2}.mpiJob()
		j.Spec.RunPolicy.Suspend = ptr.To(suspend)
		j.Status.Conditions = conds
		return j
	}
	launcher := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "c001-launcher", UID: "l1"}}
	pod := func(name, role string, owner *batchv1.Job, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kubeflow.LabelJobRole: role}}}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{{UID: owner.UID}}
		}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return p
	}
	w0, w1 := pod("c001-worker-0", "worker", nil, false), pod("c001-worker-1", "worker", nil, false)
	suspended := launcher.DeepCopy()
	suspended.Spec.Suspend = ptr.To(true)
	finished := launcher.DeepCopy()
	finished.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	former := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: "old"}}
	cases := map[string]struct {
		job      *kubeflow.MPIJob
		pods     []*corev1.Pod
		launcher *batchv1.Job
		want     string
	}{
		"running with everything":    {job(false, running...), []*corev1.Pod{w0, w1, pod("l", "launcher", launcher, false)}, launcher, ""},
		"no status yet":              {job(false), nil, nil, "no status"},
		"a worker missing":           {job(false, running...), []*corev1.Pod{w0}, launcher, "worker Pod missing"},
		"a worker stopping":          {job(false, running...), []*corev1.Pod{w0, pod("c001-worker-1", "worker", nil, true)}, launcher, ""},
		"former launcher Pod left":   {job(false, running...), []*corev1.Pod{w0, w1, pod("x", "launcher", former, false)}, launcher, ""},
		"no launcher Job":            {job(false, running...), []*corev1.Pod{w0, w1}, nil, "no launcher Job"},
		"launcher Job suspended":     {job(false, running...), []*corev1.Pod{w0, w1}, suspended, "launcher Job suspended"},
		"launcher finished, job not": {job(false, running...), []*corev1.Pod{w0, w1}, finished, "launcher Job finished, MPIJob not"},
		"final":                      {job(false, kubeflow.JobCondition{Type: kubeflow.JobSucceeded, Status: corev1.ConditionTrue}), nil, nil, ""},
		"suspended with a worker":    {job(true, running...), []*corev1.Pod{w0}, suspended, "suspended, worker Pod left"},
		"suspended, launcher runs":   {job(true, running...), nil, launcher, "suspended, launcher Job not suspended"},
		"suspended, not marked":      {job(true, running...), nil, suspended, "suspended, not marked Suspended"},
		"suspended at rest": {job(true, kubeflow.JobCondition{Type: kubeflow.JobSuspended, Status: corev1.ConditionTrue}),
			[]*corev1.Pod{pod("c001-worker-0", "worker", nil, true)}, suspended, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := workLeft(tc.job, tc.pods, tc.launcher); got != tc.want {
				t.Errorf("workLeft = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPlanIsReproducibleAndMixed(t *testing.T) {
	o := options{jobs: 50, bigWorkers: 1000, failEvery: 5, createOver: time.Minute, runMin: 10 * time.Second, runMax: 20 * time.Second}
	a, b := plan(o, newRand(7, 1)), plan(o, newRand(7, 1))
	big, fails := 0, 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("job %d differs between two plans of one seed: %+v and %+v", i, a[i], b[i])
		}
		if a[i].workers == 1000 {
			big++
		}
		if a[i].fails {
			fails++
		}
	}
	if big != 1 || fails == 0 || fails == len(a) {
		t.Errorf("plan has %d big jobs and %d of %d made to fail; want 1 big and some failing", big, fails, len(a))
	}
}
