package v2beta1_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// fieldErrors renders errs as sorted "field: type" strings, so a case can
// state exactly which fields are wrong and how.
func fieldErrors(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Field+": "+string(e.Type))
	}
	sort.Strings(out)
	return out
}

func launcher(j *kubeflow.MPIJob) *kubeflow.ReplicaSpec {
	return j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeLauncher]
}

func worker(j *kubeflow.MPIJob) *kubeflow.ReplicaSpec {
	return j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker]
}

func TestValidateAcceptsValidJobs(t *testing.T) {
	cases := map[string]*testjob.Wrapper{
		"the test job":                      testjob.MakeMPIJob("pi", "ns"),
		"no workers":                        testjob.MakeMPIJob("pi", "ns").Workers(0),
		"Intel, waiting for workers":        testjob.MakeMPIJob("pi", "ns").Implementation(kubeflow.MPIImplementationIntel).WaitForWorkers(),
		"MPICH, launcher as worker":         testjob.MakeMPIJob("pi", "ns").Implementation(kubeflow.MPIImplementationMPICH).LauncherAsWorker(),
		"non-root key path":                 testjob.MakeMPIJob("pi", "ns").SSHAuthMountPath("/home/mpiuser/.ssh"),
		"every run policy at its minimum":   testjob.MakeMPIJob("pi", "ns").BackoffLimit(0).TTL(0).ActiveDeadline(1).CleanPodPolicy(kubeflow.CleanPodPolicyRunning),
		"managedBy empty":                   testjob.MakeMPIJob("pi", "ns").ManagedBy(""),
		"managedBy this operator":           testjob.MakeMPIJob("pi", "ns").ManagedBy("kubeflow.org/mpi-operator"),
		"managedBy MultiKueue":              testjob.MakeMPIJob("pi", "ns").ManagedBy("kueue.x-k8s.io/multikueue"),
		"launcher ExitCode, workers Always": testjob.MakeMPIJob("pi", "ns").LauncherRestartPolicy(kubeflow.RestartPolicyExitCode).WorkerRestartPolicy(kubeflow.RestartPolicyAlways),
		"launcher Never, workers ExitCode":  testjob.MakeMPIJob("pi", "ns").LauncherRestartPolicy(kubeflow.RestartPolicyNever).WorkerRestartPolicy(kubeflow.RestartPolicyExitCode),
		"54-character name, 10 workers":     testjob.MakeMPIJob(strings.Repeat("a", 54), "ns").Workers(10),
		"53-character name, 100 workers":    testjob.MakeMPIJob(strings.Repeat("a", 53), "ns").Workers(100),
		"name with digits and dashes":       testjob.MakeMPIJob("pi-2-x9", "ns"),
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			if errs := kubeflow.Validate(w.Defaulted()); len(errs) != 0 {
				t.Errorf("Validate = %v, want no error", errs)
			}
		})
	}
}

func TestValidateNamesTheInvalidField(t *testing.T) {
	cases := map[string]struct {
		job    *testjob.Wrapper
		mutate func(*kubeflow.MPIJob) // on the defaulted job
		want   []string
	}{
		"upper-case name": {
			job:  testjob.MakeMPIJob("Pi", "ns"),
			want: []string{"metadata.name: FieldValueInvalid"},
		},
		"name starting with a digit": {
			job:  testjob.MakeMPIJob("1pi", "ns"),
			want: []string{"metadata.name: FieldValueInvalid"},
		},
		"name with a dot": {
			job:  testjob.MakeMPIJob("pi.v2", "ns"),
			want: []string{"metadata.name: FieldValueInvalid"},
		},
		"name longer than 54 characters": {
			job:  testjob.MakeMPIJob(strings.Repeat("a", 55), "ns"),
			want: []string{"metadata.name: FieldValueTooLong"},
		},
		"54-character name too long for 100 workers": {
			job:  testjob.MakeMPIJob(strings.Repeat("a", 54), "ns").Workers(100),
			want: []string{"metadata.name: FieldValueInvalid"},
		},
		"53-character name too long for 1000 workers": {
			job:  testjob.MakeMPIJob(strings.Repeat("a", 53), "ns").Workers(1000),
			want: []string{"metadata.name: FieldValueInvalid"},
		},
		"slotsPerWorker 0": {
			job:  testjob.MakeMPIJob("pi", "ns").Slots(0),
			want: []string{"spec.slotsPerWorker: FieldValueInvalid"},
		},
		"negative slotsPerWorker": {
			job:  testjob.MakeMPIJob("pi", "ns").Slots(-1),
			want: []string{"spec.slotsPerWorker: FieldValueInvalid"},
		},
		"relative sshAuthMountPath": {
			job:  testjob.MakeMPIJob("pi", "ns").SSHAuthMountPath(".ssh"),
			want: []string{"spec.sshAuthMountPath: FieldValueInvalid"},
		},
		"sshAuthMountPath /": {
			job:  testjob.MakeMPIJob("pi", "ns").SSHAuthMountPath("/"),
			want: []string{"spec.sshAuthMountPath: FieldValueInvalid"},
		},
		"unknown mpiImplementation": {
			job:  testjob.MakeMPIJob("pi", "ns").Implementation("LAM"),
			want: []string{"spec.mpiImplementation: FieldValueNotSupported"},
		},
		"unknown launcherCreationPolicy": {
			job:    testjob.MakeMPIJob("pi", "ns"),
			mutate: func(j *kubeflow.MPIJob) { j.Spec.LauncherCreationPolicy = "Later" },
			want:   []string{"spec.launcherCreationPolicy: FieldValueNotSupported"},
		},
		"unknown key in mpiReplicaSpecs": {
			job: testjob.MakeMPIJob("pi", "ns"),
			mutate: func(j *kubeflow.MPIJob) {
				j.Spec.MPIReplicaSpecs["PS"] = &kubeflow.ReplicaSpec{
					Replicas: ptr.To[int32](1),
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container()}},
				}
			},
			want: []string{"spec.mpiReplicaSpecs: FieldValueNotSupported"},
		},
		"missing launcher": {
			job:    testjob.MakeMPIJob("pi", "ns"),
			mutate: func(j *kubeflow.MPIJob) { delete(j.Spec.MPIReplicaSpecs, kubeflow.MPIReplicaTypeLauncher) },
			want:   []string{"spec.mpiReplicaSpecs[Launcher]: FieldValueRequired"},
		},
		"no replica specs at all": {
			job:    testjob.MakeMPIJob("pi", "ns"),
			mutate: func(j *kubeflow.MPIJob) { j.Spec.MPIReplicaSpecs = nil },
			want:   []string{"spec.mpiReplicaSpecs[Launcher]: FieldValueRequired"},
		},
		"null worker spec": {
			job:    testjob.MakeMPIJob("pi", "ns"),
			mutate: func(j *kubeflow.MPIJob) { j.Spec.MPIReplicaSpecs[kubeflow.MPIReplicaTypeWorker] = nil },
			want:   []string{"spec.mpiReplicaSpecs[Worker]: FieldValueRequired"},
		},
		"launcher replicas 2": {
			job:    testjob.MakeMPIJob("pi", "ns"),
			mutate: func(j *kubeflow.MPIJob) { launcher(j).Replicas = ptr.To[int32](2) },
			want:   []string{"spec.mpiReplicaSpecs[Launcher].replicas: FieldValueInvalid"},
		},
		"launcher replicas 0": {
			job:    testjob.MakeMPIJob("pi", "ns"),
			mutate: func(j *kubeflow.MPIJob) { launcher(j).Replicas = ptr.To[int32](0) },
			want:   []string{"spec.mpiReplicaSpecs[Launcher].replicas: FieldValueInvalid"},
		},
		"launcher restartPolicy Always": {
			job:  testjob.MakeMPIJob("pi", "ns").LauncherRestartPolicy(kubeflow.RestartPolicyAlways),
			want: []string{"spec.mpiReplicaSpecs[Launcher].restartPolicy: FieldValueInvalid"},
		},
		"unknown worker restartPolicy": {
			job:  testjob.MakeMPIJob("pi", "ns").WorkerRestartPolicy("Sometimes"),
			want: []string{"spec.mpiReplicaSpecs[Worker].restartPolicy: FieldValueNotSupported"},
		},
		"negative worker replicas": {
			job:  testjob.MakeMPIJob("pi", "ns").Workers(-1),
			want: []string{"spec.mpiReplicaSpecs[Worker].replicas: FieldValueInvalid"},
		},
		"unknown managedBy": {
			job:  testjob.MakeMPIJob("pi", "ns").ManagedBy("example.com/other"),
			want: []string{"spec.runPolicy.managedBy: FieldValueNotSupported"},
		},
		"negative backoffLimit": {
			job:  testjob.MakeMPIJob("pi", "ns").BackoffLimit(-1),
			want: []string{"spec.runPolicy.backoffLimit: FieldValueInvalid"},
		},
		"activeDeadlineSeconds 0": {
			job:  testjob.MakeMPIJob("pi", "ns").ActiveDeadline(0),
			want: []string{"spec.runPolicy.activeDeadlineSeconds: FieldValueInvalid"},
		},
		"negative ttlSecondsAfterFinished": {
			job:  testjob.MakeMPIJob("pi", "ns").TTL(-1),
			want: []string{"spec.runPolicy.ttlSecondsAfterFinished: FieldValueInvalid"},
		},
		"unknown cleanPodPolicy": {
			job:  testjob.MakeMPIJob("pi", "ns").CleanPodPolicy("Some"),
			want: []string{"spec.runPolicy.cleanPodPolicy: FieldValueNotSupported"},
		},
		"worker without containers": {
			job:    testjob.MakeMPIJob("pi", "ns"),
			mutate: func(j *kubeflow.MPIJob) { worker(j).Template.Spec.Containers = nil },
			want:   []string{"spec.mpiReplicaSpecs[Worker].template.spec.containers: FieldValueRequired"},
		},
		"launcher without containers": {
			job:    testjob.MakeMPIJob("pi", "ns"),
			mutate: func(j *kubeflow.MPIJob) { launcher(j).Template.Spec.Containers = nil },
			want:   []string{"spec.mpiReplicaSpecs[Launcher].template.spec.containers: FieldValueRequired"},
		},
		"several errors are all reported": {
			job: testjob.MakeMPIJob("pi", "ns").Slots(0).BackoffLimit(-1).Implementation("LAM"),
			want: []string{
				"spec.mpiImplementation: FieldValueNotSupported",
				"spec.runPolicy.backoffLimit: FieldValueInvalid",
				"spec.slotsPerWorker: FieldValueInvalid",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := tc.job.Defaulted()
			if tc.mutate != nil {
				tc.mutate(job)
			}
			got := fieldErrors(kubeflow.Validate(job))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}
