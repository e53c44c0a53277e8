package builder

import (
	"fmt"
	"strings"
	"testing"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

func TestConfigMapSizeBoundsTheBuiltSize(t *testing.T) {
	cases := map[string]*testjob.Wrapper{
		"no workers":                testjob.MakeMPIJob("pi", "ns").Workers(0),
		"one worker":                testjob.MakeMPIJob("pi", "ns"),
		"11 workers, 2-digit slots": testjob.MakeMPIJob("pi", "ns").Workers(11).Slots(16),
		"1001 workers, Intel":       testjob.MakeMPIJob("pi", "ns").Workers(1001).Implementation(kubeflow.MPIImplementationIntel),
		"launcher runs ranks":       testjob.MakeMPIJob("pi", "ns").Workers(100).LauncherAsWorker(),
	}
	for name, w := range cases {
		for _, opts := range []Options{{}, {ClusterDomain: "cluster.local"}} {
			job := w.Defaulted()
			n := int(job.Workers())
			// Which workers run shapes discover_hosts.sh: none, all,
			// every other one, and runs of two.
			sets := map[string][]int{"none": nil}
			for i := range n {
				sets["all"] = append(sets["all"], i)
				if i%2 == 0 {
					sets["every other"] = append(sets["every other"], i)
				}
				if i%3 != 2 {
					sets["pairs"] = append(sets["pairs"], i)
				}
			}
			bound := configMapSize(job, opts)
			for set, running := range sets {
				cm := ConfigMap(job, running, nil, opts)
				if built := int64(len(cm.Data[HostfileKey]) + len(cm.Data[DiscoverHostsKey])); built > bound {
					t.Errorf("%s, %+v, %s running: configMapSize = %d, the built ConfigMap holds %d", name, opts, set, bound, built)
				}
			}
		}
	}
}

func TestValidateRefusesAHostfileTooLargeForAConfigMap(t *testing.T) {
	// "a-worker-<i>.a slots=1\n" and an index in discover_hosts.sh: 30
	// bytes a worker from 10000 on, so 100000 workers take far more than
	// 1 MiB.
	job := testjob.MakeMPIJob("a", "ns").Workers(100000).Defaulted()
	errs := Validate(job, Options{})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec.mpiReplicaSpecs[Worker].replicas") {
		t.Fatalf("Validate = %v, want one error naming the workers' replicas", errs)
	}
	// 2^31-1 workers must be refused without building their hostfile,
	// which would take some 100 GB.
	job = testjob.MakeMPIJob("a", "ns").Workers(1<<31 - 1).Defaulted()
	if errs := Validate(job, Options{}); len(errs) != 1 {
		t.Fatalf("Validate of 2^31-1 workers = %v, want one error", errs)
	}
	if errs := Validate(testjob.MakeMPIJob("a", "ns").Workers(1000).Defaulted(), Options{ClusterDomain: "cluster.local"}); len(errs) != 0 {
		t.Errorf("Validate of 1000 workers = %v, want none", errs)
	}
}

// The largest job the design allows: its ConfigMap, with the workers
// running in the pattern that makes discover_hosts.sh longest, fits; one
// worker more is refused with a message that gives the limit. A job name
// of 38 characters still takes 10,000 workers (docs/scale.md).
func TestLargestJobsConfigMapFits(t *testing.T) {
	cases := []struct {
		name      string
		ns        string
		opts      Options
		atLeast   int32
		impl      kubeflow.MPIImplementation
		launchers bool
	}{
		{name: "pi", ns: "ns", atLeast: 30000},
		{name: strings.Repeat("j", 38), ns: "ns", atLeast: 10000},
		{name: strings.Repeat("j", 38), ns: "ns", atLeast: 10000, impl: kubeflow.MPIImplementationMPICH, launchers: true},
		{name: strings.Repeat("j", 51), ns: strings.Repeat("n", 63), opts: Options{ClusterDomain: "cluster.local"}, atLeast: 4900},
	}
	for _, tc := range cases {
		w := testjob.MakeMPIJob(tc.name, tc.ns)
		if tc.impl != "" {
			w = w.Implementation(tc.impl)
		}
		if tc.launchers {
			w = w.LauncherAsWorker()
		}
		n := MaxWorkers(w.Defaulted(), tc.opts)
		if n < tc.atLeast {
			t.Errorf("%d-character name: at most %d workers, want at least %d", len(tc.name), n, tc.atLeast)
		}
		job := w.Workers(n).Defaulted()
		if errs := Validate(job, tc.opts); len(errs) != 0 {
			t.Errorf("%d-character name, %d workers: %v", len(tc.name), n, errs)
		}
		var running []int
		for i := 0; i < int(n); i += 2 {
			running = append(running, i)
		}
		cm := ConfigMap(job, running, []byte(upstreamPublicKey), tc.opts)
		size := 0
		for _, v := range cm.Data {
			size += len(v)
		}
		if size > MaxConfigMapData {
			t.Errorf("%d-character name, %d workers: the ConfigMap holds %d bytes, more than %d", len(tc.name), n, size, MaxConfigMapData)
		}
		errs := Validate(w.Workers(n+1).Defaulted(), tc.opts)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), fmt.Sprintf("at most %d workers fit", n)) {
			t.Errorf("%d-character name, %d workers: %v, want the limit of %d named", len(tc.name), n+1, errs, n)
		}
	}
}

// The annotation that says whether the cluster's DNS caches denials takes
// true or false; anything else is refused, naming it, rather than read as
// the operator's own setting.
func TestValidateDNSCachesDenialsAnnotation(t *testing.T) {
	for v, ok := range map[string]bool{"true": true, "false": true, "yes": false, "": false} {
		job := testjob.MakeMPIJob("pi", "ns").Defaulted()
		job.Annotations = map[string]string{AnnotationDNSCachesDenials: v}
		errs := Validate(job, testOpts)
		if ok != (len(errs) == 0) {
			t.Errorf("%q: %v, want valid %t", v, errs, ok)
		}
		if !ok && (len(errs) != 1 || !strings.Contains(errs[0].Error(), "metadata.annotations[mpi-operator.kubeflow.org/dns-caches-denials]")) {
			t.Errorf("%q: %v, want one error naming the annotation", v, errs)
		}
	}
}
