package v2beta1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func container() []corev1.Container {
	return []corev1.Container{{Name: "c", Image: "mpi"}}
}

func TestSetDefaultsFillsEveryDefault(t *testing.T) {
	job := &kubeflow.MPIJob{Spec: kubeflow.MPIJobSpec{
		MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
			kubeflow.MPIReplicaTypeLauncher: {Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container()}}},
			kubeflow.MPIReplicaTypeWorker:   {Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container()}}},
		},
	}}
	want := kubeflow.MPIJobSpec{
		SlotsPerWorker:      ptr.To[int32](1),
		RunLauncherAsWorker: ptr.To(false),
		RunPolicy: kubeflow.RunPolicy{
			CleanPodPolicy: ptr.To(kubeflow.CleanPodPolicy("None")),
			Suspend:        ptr.To(false),
		},
		MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
			"Launcher": {
				Replicas:      ptr.To[int32](1),
				RestartPolicy: "OnFailure",
				Template:      corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container()}},
			},
			"Worker": {
				Replicas:      ptr.To[int32](0),
				RestartPolicy: "Never",
				Template:      corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container()}},
			},
		},
		SSHAuthMountPath:       "/root/.ssh",
		LauncherCreationPolicy: "AtStartup",
		MPIImplementation:      "OpenMPI",
	}
	kubeflow.SetDefaults(job)
	if diff := cmp.Diff(want, job.Spec); diff != "" {
		t.Errorf("defaulted spec (-want +got):\n%s", diff)
	}
}

func TestSetDefaultsKeepsSetValues(t *testing.T) {
	job := &kubeflow.MPIJob{Spec: kubeflow.MPIJobSpec{
		SlotsPerWorker:      ptr.To[int32](8),
		RunLauncherAsWorker: ptr.To(true),
		RunPolicy: kubeflow.RunPolicy{
			CleanPodPolicy:          ptr.To(kubeflow.CleanPodPolicyAll),
			TTLSecondsAfterFinished: ptr.To[int32](60),
			ActiveDeadlineSeconds:   ptr.To[int64](600),
			BackoffLimit:            ptr.To[int32](2),
			Suspend:                 ptr.To(true),
			ManagedBy:               ptr.To(kubeflow.MultiKueueController),
		},
		MPIReplicaSpecs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
			kubeflow.MPIReplicaTypeLauncher: {
				Replicas:      ptr.To[int32](1),
				RestartPolicy: kubeflow.RestartPolicyExitCode,
				Template:      corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container()}},
			},
			kubeflow.MPIReplicaTypeWorker: {
				Replicas:      ptr.To[int32](4),
				RestartPolicy: kubeflow.RestartPolicyOnFailure,
				Template:      corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container()}},
			},
		},
		SSHAuthMountPath:       "/home/mpiuser/.ssh",
		LauncherCreationPolicy: kubeflow.LauncherCreationPolicyWaitForWorkersReady,
		MPIImplementation:      kubeflow.MPIImplementationIntel,
	}}
	want := job.DeepCopy()
	kubeflow.SetDefaults(job)
	if diff := cmp.Diff(want, job); diff != "" {
		t.Errorf("SetDefaults changed set values (-want +got):\n%s", diff)
	}
}

func TestSetDefaultsKeepsExplicitZeroValues(t *testing.T) {
	// false and 0 are set values, not "unset". They equal the defaults, so
	// only the identity of the pointers shows whether they were replaced.
	job := testjob.MakeMPIJob("pi", "ns").Workers(0).Suspend(false).Obj()
	workers := job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Replicas
	suspend := job.Spec.RunPolicy.Suspend
	kubeflow.SetDefaults(job)
	if job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Replicas != workers {
		t.Error("worker replicas 0 was replaced")
	}
	if job.Spec.RunPolicy.Suspend != suspend {
		t.Error("suspend false was replaced")
	}
}

func TestSetDefaultsWithMissingReplicaSpecs(t *testing.T) {
	cases := map[string]struct {
		specs map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec
		want  map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec
	}{
		"no replica specs: none added": {},
		"launcher only: no worker added": {
			specs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{"Launcher": {}},
			want: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
				"Launcher": {Replicas: ptr.To[int32](1), RestartPolicy: "OnFailure"},
			},
		},
		"worker only: no launcher added": {
			specs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{"Worker": {}},
			want: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{
				"Worker": {Replicas: ptr.To[int32](0), RestartPolicy: "Never"},
			},
		},
		"nil entries stay nil": {
			specs: map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{"Launcher": nil, "Worker": nil},
			want:  map[kubeflow.MPIReplicaType]*kubeflow.ReplicaSpec{"Launcher": nil, "Worker": nil},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := &kubeflow.MPIJob{Spec: kubeflow.MPIJobSpec{MPIReplicaSpecs: tc.specs}}
			kubeflow.SetDefaults(job)
			if diff := cmp.Diff(tc.want, job.Spec.MPIReplicaSpecs); diff != "" {
				t.Errorf("replica specs (-want +got):\n%s", diff)
			}
			if got := job.Spec.SSHAuthMountPath; got != "/root/.ssh" {
				t.Errorf("sshAuthMountPath = %q, want the default", got)
			}
		})
	}
}

func TestSetDefaultsIsIdempotent(t *testing.T) {
	once := testjob.MakeMPIJob("pi", "ns").Workers(2).Defaulted()
	twice := once.DeepCopy()
	kubeflow.SetDefaults(twice)
	if diff := cmp.Diff(once, twice); diff != "" {
		t.Errorf("second SetDefaults changed the job (-once +twice):\n%s", diff)
	}
}

func TestJobAccessors(t *testing.T) {
	cases := map[string]struct {
		job         *kubeflow.MPIJob
		workers     int32
		suspended   bool
		managedByUs bool
	}{
		"defaulted job": {
			job:         testjob.MakeMPIJob("pi", "ns").Workers(3).Defaulted(),
			workers:     3,
			managedByUs: true,
		},
		"no worker spec": {
			job: func() *kubeflow.MPIJob {
				j := testjob.MakeMPIJob("pi", "ns").Obj()
				delete(j.Spec.MPIReplicaSpecs, kubeflow.MPIReplicaTypeWorker)
				return j
			}(),
			workers:     0,
			managedByUs: true,
		},
		"suspended": {
			job:         testjob.MakeMPIJob("pi", "ns").Suspend(true).Defaulted(),
			workers:     1,
			suspended:   true,
			managedByUs: true,
		},
		"managedBy empty": {
			job:         testjob.MakeMPIJob("pi", "ns").ManagedBy("").Defaulted(),
			workers:     1,
			managedByUs: true,
		},
		"managedBy this operator": {
			job:         testjob.MakeMPIJob("pi", "ns").ManagedBy("kubeflow.org/mpi-operator").Defaulted(),
			workers:     1,
			managedByUs: true,
		},
		"managedBy MultiKueue": {
			job:         testjob.MakeMPIJob("pi", "ns").ManagedBy("kueue.x-k8s.io/multikueue").Defaulted(),
			workers:     1,
			managedByUs: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.job.Workers(); got != tc.workers {
				t.Errorf("Workers() = %d, want %d", got, tc.workers)
			}
			if got := tc.job.IsSuspended(); got != tc.suspended {
				t.Errorf("IsSuspended() = %v, want %v", got, tc.suspended)
			}
			if got := tc.job.IsManagedByUs(); got != tc.managedByUs {
				t.Errorf("IsManagedByUs() = %v, want %v", got, tc.managedByUs)
			}
		})
	}
}
