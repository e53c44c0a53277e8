package builder

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// ConfigMap is the job's hostfile, discover_hosts.sh, known_hosts and
// ssh_config.
// running lists the indices of the workers whose Pods run now, in
// increasing order: elastic Horovod calls discover_hosts.sh to learn which
// hosts it may use. publicKey is the job's, from its Secret (see
// KnownHosts).
func ConfigMap(job *kubeflow.MPIJob, running []int, publicKey []byte, opts Options) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: objectMeta(job, ConfigMapName(job), JobLabels(job)),
		Data: map[string]string{
			HostfileKey:      Hostfile(job, opts),
			DiscoverHostsKey: DiscoverHosts(job, running, opts),
			KnownHostsKey:    KnownHosts(job, publicKey, opts),
			SSHConfigKey:     SSHConfig,
		},
	}
}

// Hostfile lists every host of the job with its slots, in the syntax of the
// job's MPI implementation: Open MPI takes "host slots=N", Intel MPI and
// MPICH's hydra take "host:N". The launcher comes first when it runs ranks.
func Hostfile(job *kubeflow.MPIJob, opts Options) string {
	slots := *job.Spec.SlotsPerWorker
	var b strings.Builder
	line := func(host string) {
		if job.Spec.MPIImplementation == kubeflow.MPIImplementationOpenMPI {
			fmt.Fprintf(&b, "%s slots=%d\n", host, slots)
		} else {
			fmt.Fprintf(&b, "%s:%d\n", host, slots)
		}
	}
	if *job.Spec.RunLauncherAsWorker {
		line(HostName(job, LauncherName(job), opts))
	}
	for i := range int(job.Workers()) {
		line(HostName(job, WorkerName(job, i), opts))
	}
	return b.String()
}

// DiscoverHosts is a shell script printing "host:slots" for each running
// worker, the format of Horovod's --host-discovery-script.
func DiscoverHosts(job *kubeflow.MPIJob, running []int, opts Options) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	if *job.Spec.RunLauncherAsWorker {
		fmt.Fprintf(&b, "echo %s:%d\n", HostName(job, LauncherName(job), opts), *job.Spec.SlotsPerWorker)
	}
	for _, i := range running {
		fmt.Fprintf(&b, "echo %s:%d\n", HostName(job, WorkerName(job, i), opts), *job.Spec.SlotsPerWorker)
	}
	return b.String()
}

// HostfileHosts returns the hosts a hostfile lists, in either syntax
// Hostfile writes.
func HostfileHosts(hostfile string) []string {
	var out []string
	for line := range strings.Lines(hostfile) {
		if host := lineHost(line); host != "" {
			out = append(out, host)
		}
	}
	return out
}

// HostfileWithout returns the hostfile without the lines of the given
// hosts.
func HostfileWithout(hostfile string, drop map[string]bool) string {
	var b strings.Builder
	for line := range strings.Lines(hostfile) {
		if !drop[lineHost(line)] {
			b.WriteString(line)
		}
	}
	return b.String()
}

func lineHost(line string) string {
	host, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	host, _, _ = strings.Cut(host, ":")
	return host
}

// DiscoveredHosts returns the hosts a discover_hosts.sh from DiscoverHosts
// prints.
func DiscoveredHosts(script string) []string {
	var out []string
	for line := range strings.Lines(script) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "echo "); ok {
			if host := lineHost(rest); host != "" {
				out = append(out, host)
			}
		}
	}
	return out
}
