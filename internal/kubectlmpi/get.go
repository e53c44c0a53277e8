package kubectlmpi

import (
	"io"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// JobSummary is one row of `kubectl mpi get`, and one item of its JSON
// and YAML output.
type JobSummary struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Phase is the latest true condition (see Phase).
	Phase string `json:"phase"`
	// WorkersRunning counts the worker Pods that run and are not being
	// deleted; Workers is how many the job asks for.
	WorkersRunning int32 `json:"workersRunning"`
	Workers        int32 `json:"workers"`
	// Restarts counts the job's whole-job restarts (the operator's
	// restart annotation).
	Restarts          int32       `json:"restarts"`
	CreationTimestamp metav1.Time `json:"creationTimestamp"`
}

// JobSummaryList is the JSON and YAML output of `kubectl mpi get`.
type JobSummaryList struct {
	Items []JobSummary `json:"items"`
}

// Summarize sums up a job from its worker Pods.
func Summarize(job *kubeflow.MPIJob, workers []corev1.Pod) JobSummary {
	s := JobSummary{
		Namespace: job.Namespace, Name: job.Name, Phase: Phase(job),
		Workers: job.Workers(), Restarts: restartOf(job).Count, CreationTimestamp: job.CreationTimestamp,
	}
	for i := range workers {
		if isRunning(&workers[i]) {
			s.WorkersRunning++
		}
	}
	return s
}

// WriteTable prints jobs as `kubectl mpi get` does; the namespace column
// only for allNamespaces, ages counted to now.
func WriteTable(w io.Writer, jobs []JobSummary, allNamespaces bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	out := &printer{w: tw}
	if allNamespaces {
		out.printf("NAMESPACE\t")
	}
	out.println("NAME\tPHASE\tWORKERS\tRESTARTS\tAGE")
	for _, j := range jobs {
		if allNamespaces {
			out.printf("%s\t", j.Namespace)
		}
		out.printf("%s\t%s\t%d/%d\t%d\t%s\n", j.Name, j.Phase, j.WorkersRunning, j.Workers, j.Restarts, age(j.CreationTimestamp, now))
	}
	if out.err != nil {
		return out.err
	}
	return tw.Flush()
}

// age is how kubectl shows the time since t.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
