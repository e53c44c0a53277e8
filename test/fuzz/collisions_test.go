package fuzz

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// TestTemplatesCollidingWithTheOperatorsAdditions: the jobs
// FuzzChildrenAreAdmitted found whose children the API server refused.
// Each is admitted; builder.Validate names the field (so the controller
// fails the job with that message instead of retrying a refused create
// forever), and the API server does refuse the child, so the rule refuses
// nothing that would have worked.
func TestTemplatesCollidingWithTheOperatorsAdditions(t *testing.T) {
	launcher := func(j *kubeflow.MPIJob) *corev1.PodSpec {
		return &j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template.Spec
	}
	worker := func(j *kubeflow.MPIJob) *corev1.PodSpec {
		return &j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker].Template.Spec
	}
	searches := make([]string, 32)
	for i := range searches {
		searches[i] = "example.com"
	}
	cases := map[string]struct {
		edit  func(*kubeflow.MPIJob)
		field string
	}{
		"sshAuthMountPath is /etc/mpi": {
			edit:  func(j *kubeflow.MPIJob) { j.Spec.SSHAuthMountPath = "/etc/mpi" },
			field: "spec.sshAuthMountPath",
		},
		"a launcher container mounts a volume at /etc/mpi": {
			edit: func(j *kubeflow.MPIJob) {
				launcher(j).Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				launcher(j).Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/etc/mpi"}}
			},
			field: "spec.mpiReplicaSpecs[Launcher].template.spec.containers[0].volumeMounts[0].mountPath",
		},
		"a worker container mounts a volume at sshAuthMountPath": {
			edit: func(j *kubeflow.MPIJob) {
				worker(j).Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				worker(j).Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/root/.ssh"}}
			},
			field: "spec.mpiReplicaSpecs[Worker].template.spec.containers[0].volumeMounts[0].mountPath",
		},
		"a worker volume named ssh-auth": {
			edit: func(j *kubeflow.MPIJob) {
				worker(j).Volumes = []corev1.Volume{{Name: "ssh-auth", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			},
			field: "spec.mpiReplicaSpecs[Worker].template.spec.volumes[0].name",
		},
		"a launcher volume named mpi-job-config": {
			edit: func(j *kubeflow.MPIJob) {
				launcher(j).Volumes = []corev1.Volume{{Name: "mpi-job-config", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			},
			field: "spec.mpiReplicaSpecs[Launcher].template.spec.volumes[0].name",
		},
		"a launcher volume named mpi-job-published, where the DNS caches denials": {
			edit: func(j *kubeflow.MPIJob) {
				j.Annotations = map[string]string{builder.AnnotationDNSCachesDenials: "true"}
				launcher(j).Volumes = []corev1.Volume{{Name: "mpi-job-published", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			},
			field: "spec.mpiReplicaSpecs[Launcher].template.spec.volumes[0].name",
		},
		"a launcher's first container mounts a volume at /etc/mpi-operator, where the DNS caches denials": {
			edit: func(j *kubeflow.MPIJob) {
				j.Annotations = map[string]string{builder.AnnotationDNSCachesDenials: "true"}
				launcher(j).Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				launcher(j).Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/etc/mpi-operator"}}
			},
			field: "spec.mpiReplicaSpecs[Launcher].template.spec.containers[0].volumeMounts[0].mountPath",
		},
		"a worker volume named mpi-job-config": {
			// Workers mount known_hosts and ssh_config from the job's
			// ConfigMap under that name (found by FuzzChildrenAreAdmitted).
			edit: func(j *kubeflow.MPIJob) {
				worker(j).Volumes = []corev1.Volume{{Name: "mpi-job-config", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			},
			field: "spec.mpiReplicaSpecs[Worker].template.spec.volumes[0].name",
		},
		"a worker's first container mounts a volume at /etc/mpi": {
			edit: func(j *kubeflow.MPIJob) {
				worker(j).Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				worker(j).Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/etc/mpi"}}
			},
			field: "spec.mpiReplicaSpecs[Worker].template.spec.containers[0].volumeMounts[0].mountPath",
		},
		"a launcher container named wait-for-workers, with no command (the wait is then an init container)": {
			edit: func(j *kubeflow.MPIJob) {
				launcher(j).Containers[0].Name = builder.WaitForWorkersContainer
				launcher(j).Containers[0].Command = nil
			},
			field: "spec.mpiReplicaSpecs[Launcher].template.spec.containers[0].name",
		},
		"32 DNS search domains in the worker template": {
			edit:  func(j *kubeflow.MPIJob) { worker(j).DNSConfig = &corev1.PodDNSConfig{Searches: searches} },
			field: "spec.mpiReplicaSpecs[Worker].template.spec.dnsConfig.searches",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := testjob.MakeMPIJob("pi", namespace).Obj()
			tc.edit(job)
			if !admitted(t, job) {
				t.Fatal("the API server refused the job: the case proves nothing")
			}
			kubeflow.SetDefaults(job)
			if errs := kubeflow.Validate(job); len(errs) > 0 {
				t.Fatalf("Validate: %v", errs)
			}
			errs := builder.Validate(job, builder.Options{})
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.field+":") {
				t.Errorf("builder.Validate = %v, want one error naming %s", errs, tc.field)
			}
			job.UID = "0b5e7f4c-0000-4000-8000-000000000000"
			refused := false
			for _, kid := range []client.Object{builder.LauncherJob(job, false, builder.Options{}), builder.WorkerPod(job, 0, builder.Options{})} {
				refused = refused || k8s.Create(context.Background(), kid, client.DryRunAll) != nil
			}
			if !refused {
				t.Error("the API server accepted every child: the rule refuses a job that would work")
			}
		})
	}
}

// TestLauncherTemplateWithTheJobAPIsLabels: the Job API sets these labels
// of the launcher's template itself and refused the Job when the MPIJob's
// template gave them other values; the builder leaves them out.
func TestLauncherTemplateWithTheJobAPIsLabels(t *testing.T) {
	for _, key := range builder.JobControllerLabels {
		t.Run(key, func(t *testing.T) {
			job := testjob.MakeMPIJob("pi", namespace).Obj()
			job.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher].Template.Labels = map[string]string{key: "x"}
			if !checkChildren(t, job, builder.Options{}) {
				t.Fatal("refused before its children were built")
			}
		})
	}
}
