package builder

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mpi-operator/mpi-operator/internal/testjob"
)

// scaleTableNames are the job name lengths of docs/scale.md's table.
var scaleTableNames = []int{2, 10, 20, 30, 38, 45, 51}

// scaleTable is docs/scale.md's table of the most workers a job can have,
// computed by MaxWorkers.
func scaleTable() string {
	var b strings.Builder
	b.WriteString("| job name | workers, default | workers, `--cluster-domain=cluster.local`, namespace `default` |\n")
	b.WriteString("| --- | --- | --- |\n")
	for _, l := range scaleTableNames {
		job := testjob.MakeMPIJob(strings.Repeat("j", l), "default").Defaulted()
		fmt.Fprintf(&b, "| %d characters | %d | %d |\n", l,
			MaxWorkers(job, Options{}), MaxWorkers(job, Options{ClusterDomain: "cluster.local"}))
	}
	return b.String()
}

// docs/scale.md gives the limits MaxWorkers computes now.
func TestScaleDocGivesMaxWorkers(t *testing.T) {
	doc, err := os.ReadFile("../../docs/scale.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := scaleTable(); !strings.Contains(string(doc), want) {
		t.Errorf("docs/scale.md does not hold the table MaxWorkers gives now:\n%s", want)
	}
}
