//go:build e2e

package e2e

import (
	"fmt"
	"testing"
)

// TestRanksRunOnTheirWorkers is the heart of the suite: for each MPI
// implementation, as root and as a non-root user, every rank runs on its
// own worker Pod and the Allreduce is right, ssh checking the workers'
// host keys. An Open MPI 5 image given only
// Open MPI 4's variables would run every rank on the launcher and still
// exit 0; this test would catch it.
func TestRanksRunOnTheirWorkers(t *testing.T) {
	for _, img := range []image{openMPI4, openMPI5, mpich} {
		for _, nonRoot := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nonroot=%t", img.name, nonRoot), func(t *testing.T) {
				t.Parallel()
				job := mpiJob(t, img, nonRoot, 2, "mpirun", "-n", "2", "/opt/mpi/ranks")
				create(t, job)
				expectRanksOn(t, job, workerNames(job, 2)...)
				expectHostKeysChecked(t, job)
			})
		}
	}
}
