package builder

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// MaxConfigMapData is the most the values of a ConfigMap may hold: the
// API server refuses a larger one.
const MaxConfigMapData = 1 << 20

// Validate checks a defaulted job that passed kubeflow.Validate against
// what the builders make of it, which admission cannot check: the size of
// the hostfile depends on the options. A job that fails it would have a
// child the API server refuses, every time the controller tries: the
// controller fails it instead, with a message naming the field.
func Validate(job *kubeflow.MPIJob, opts Options) field.ErrorList {
	var errs field.ErrorList
	if size := configMapSize(job, opts); size > MaxConfigMapData {
		p := field.NewPath("spec", "mpiReplicaSpecs").Key(string(kubeflow.MPIReplicaTypeWorker)).Child("replicas")
		errs = append(errs, field.Invalid(p, job.Workers(), fmt.Sprintf(
			"the hostfile and discover_hosts.sh of %d workers take %d bytes, more than a ConfigMap holds (%d): use fewer workers or a shorter name",
			job.Workers(), size, MaxConfigMapData)))
	}
	return errs
}

// configMapSize is the size of the values of the job's ConfigMap with
// every worker running, computed without building it: a job may ask for
// 2^31 workers, whose hostfile would not fit in the controller's memory.
func configMapSize(job *kubeflow.MPIJob, opts Options) int64 {
	slots := len(strconv.Itoa(int(*job.Spec.SlotsPerWorker)))
	// A host takes a line of the hostfile and one of discover_hosts.sh.
	perHost := func(hostLen int) int64 {
		line := hostLen + len(":") + slots + len("\n")
		if job.Spec.MPIImplementation == kubeflow.MPIImplementationOpenMPI {
			line = hostLen + len(" slots=") + slots + len("\n")
		}
		return int64(line + len("echo ") + hostLen + len(":") + slots + len("\n"))
	}
	size := int64(len("#!/bin/sh\n"))
	if *job.Spec.RunLauncherAsWorker {
		size += perHost(len(HostName(job, LauncherName(job), opts)))
	}
	// The workers' hostnames differ only in the digits of their index.
	base := len(HostName(job, WorkerName(job, 0), opts)) - 1
	n := int64(job.Workers())
	for digits, lo, hi := 1, int64(0), int64(10); lo < n; digits, lo, hi = digits+1, hi, hi*10 {
		size += (min(n, hi) - lo) * perHost(base+digits)
	}
	return size
}
