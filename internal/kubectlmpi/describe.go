package kubectlmpi

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
	"github.com/mpi-operator/mpi-operator/internal/jobrecord"
)

// Description is the output of `kubectl mpi describe`, in JSON and YAML as
// it is here.
type Description struct {
	JobSummary `json:",inline"`
	// Conditions are the MPIJob's, as the operator wrote them.
	Conditions []kubeflow.JobCondition `json:"conditions,omitempty"`
	// WorkerPods has one entry per worker the job asks for, by index, a
	// missing Pod included (Phase Missing), then any Pod of a higher
	// index left from a scale-down.
	WorkerPods []PodState `json:"workerPods"`
	// Launcher is the launcher Job and its Pods, one per attempt.
	Launcher LauncherState `json:"launcher"`
	// Startup is when each step of the startup was reached.
	Startup []StartupPhase `json:"startup"`
	// LastFailure is the last failure, if any.
	LastFailure *Failure `json:"lastFailure,omitempty"`
	// AvoidedNodes are the nodes the job's restarts keep its Pods off,
	// each until its time (the restart record's).
	AvoidedNodes []jobrecord.AvoidedNode `json:"avoidedNodes,omitempty"`
	// Events are the MPIJob's, oldest first.
	Events []Event `json:"events"`
}

// LauncherState is the launcher Job and its attempts.
type LauncherState struct {
	// Job is the launcher Job's name; Exists says whether it exists.
	Job    string `json:"job"`
	Exists bool   `json:"exists"`
	// Active, Succeeded and Failed are the Job's counts of Pods.
	Active    int32 `json:"active"`
	Succeeded int32 `json:"succeeded"`
	Failed    int32 `json:"failed"`
	// Attempts are its Pods, oldest first.
	Attempts []PodState `json:"attempts"`
}

// Objects are what describe reads: the MPIJob and its children.
type Objects struct {
	Job          *kubeflow.MPIJob
	Workers      []corev1.Pod
	LauncherJob  *batchv1.Job
	LauncherPods []corev1.Pod
	Events       []corev1.Event
}

// Describe computes the description of a job from its objects.
func Describe(o Objects) Description {
	job := o.Job
	d := Description{
		JobSummary: Summarize(job, o.Workers),
		Conditions: job.Status.Conditions,
		Launcher:   LauncherState{Job: builder.LauncherJobName(job, restartOf(job).Count)},
		Startup:    StartupPhases(job, o.Workers, o.LauncherPods),
		Events:     Events(o.Events),
	}
	d.LastFailure = LastFailure(job, o.Workers, o.LauncherPods)
	d.AvoidedNodes = restartOf(job).AvoidNodes

	byIndex := map[int]PodState{}
	var extra []PodState
	for i := range o.Workers {
		p := &o.Workers[i]
		idx, ok := workerIndex(job, p)
		if !ok || idx >= int(job.Workers()) {
			extra = append(extra, podState(p))
			continue
		}
		byIndex[idx] = podState(p)
	}
	for i := range int(job.Workers()) {
		s, ok := byIndex[i]
		if !ok {
			s = PodState{Name: builder.WorkerName(job, i), Phase: PhaseMissing}
		}
		d.WorkerPods = append(d.WorkerPods, s)
	}
	slices.SortFunc(extra, func(a, b PodState) int { return cmp.Compare(a.Name, b.Name) })
	d.WorkerPods = append(d.WorkerPods, extra...)

	if l := o.LauncherJob; l != nil {
		d.Launcher.Exists = true
		if l.Name != "" {
			d.Launcher.Job = l.Name
		}
		d.Launcher.Active, d.Launcher.Succeeded, d.Launcher.Failed = l.Status.Active, l.Status.Succeeded, l.Status.Failed
	}
	pods := slices.Clone(o.LauncherPods)
	byCreation(pods)
	for i := range pods {
		d.Launcher.Attempts = append(d.Launcher.Attempts, podState(&pods[i]))
	}
	return d
}

// WriteDescription prints a description as plain text.
func WriteDescription(w io.Writer, d *Description, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	out := &printer{w: tw}
	out.printf("Name:\t%s\n", d.Name)
	out.printf("Namespace:\t%s\n", d.Namespace)
	out.printf("Phase:\t%s\n", d.Phase)
	out.printf("Workers:\t%d/%d running\n", d.WorkersRunning, d.Workers)
	out.printf("Restarts:\t%d\n", d.Restarts)
	for _, a := range d.AvoidedNodes {
		if now.Before(a.Until.Time) {
			out.printf("Avoiding node:\t%s for %s more (a worker was lost with it)\n", a.Node, a.Until.Sub(now).Round(time.Second))
		}
	}
	out.printf("Age:\t%s\n", age(d.CreationTimestamp, now))

	out.println("\nConditions:")
	if len(d.Conditions) == 0 {
		out.println("  <none>")
	} else {
		out.println("  TYPE\tSTATUS\tREASON\tSINCE\tMESSAGE")
		for _, c := range d.Conditions {
			out.printf("  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, age(c.LastTransitionTime, now), oneLine(c.Message))
		}
	}

	out.println("\nStartup:")
	out.println("  STEP\tTIME\tAFTER CREATION")
	for _, s := range d.Startup {
		at, after := "-", "-"
		if s.Time != nil {
			at = s.Time.UTC().Format(time.RFC3339)
			after = s.SinceCreated.Duration.String()
		}
		out.printf("  %s\t%s\t%s\n", s.Phase, at, after)
	}

	out.println("\nWorkers:")
	writePods(out, "NAME", d.WorkerPods)

	out.printf("\nLauncher: Job %s", d.Launcher.Job)
	if d.Launcher.Exists {
		out.printf(" (active %d, succeeded %d, failed %d)\n", d.Launcher.Active, d.Launcher.Succeeded, d.Launcher.Failed)
	} else {
		out.println(" (not created)")
	}
	writePods(out, "ATTEMPT", d.Launcher.Attempts)

	out.println("\nLast failure:")
	if f := d.LastFailure; f == nil {
		out.println("  <none>")
	} else {
		if f.Pod != "" {
			out.printf("  Pod:\t%s (%s)\n", f.Pod, cmp.Or(f.Role, "unknown role"))
		}
		if f.ExitCode != nil {
			out.printf("  Exit:\tcontainer %s exited with code %d (%s)\n", f.Container, *f.ExitCode, cmp.Or(f.ExitReason, "no reason"))
		} else if f.ExitReason != "" {
			out.printf("  Exit:\t%s\n", f.ExitReason)
		}
		if f.Time != nil {
			out.printf("  At:\t%s\n", f.Time.UTC().Format(time.RFC3339))
		}
		if f.Condition != "" {
			out.printf("  Condition:\t%s (%s): %s\n", f.Condition, f.Reason, oneLine(f.Message))
		}
	}

	out.println("\nEvents:")
	if len(d.Events) == 0 {
		out.println("  <none>")
	} else {
		out.println("  TYPE\tREASON\tAGE\tCOUNT\tMESSAGE")
		for _, e := range d.Events {
			out.printf("  %s\t%s\t%s\t%d\t%s\n", e.Type, e.Reason, age(e.LastSeen, now), e.Count, oneLine(e.Message))
		}
	}
	if out.err != nil {
		return out.err
	}
	return tw.Flush()
}

func writePods(out *printer, first string, pods []PodState) {
	if len(pods) == 0 {
		out.println("  <none>")
		return
	}
	out.printf("  %s\tPHASE\tREADY\tRESTARTS\tNODE\tLAST EXIT\n", first)
	for _, p := range pods {
		phase := p.Phase
		if p.Terminating {
			phase += ",Terminating"
		}
		exit := "-"
		if t := p.LastTermination; t != nil {
			exit = fmt.Sprintf("%d (%s)", t.ExitCode, cmp.Or(t.Reason, "no reason"))
		}
		out.printf("  %s\t%s\t%t\t%d\t%s\t%s\n", p.Name, cmp.Or(phase, "Unknown"), p.Ready, p.Restarts, cmp.Or(p.Node, "-"), exit)
	}
}

// oneLine keeps the first line of a message (a Failed event carries the
// launcher's log after it) so the table stays a table; -o yaml has it all.
func oneLine(s string) string {
	first, _, cut := strings.Cut(s, "\n")
	if cut {
		return first + " [...]"
	}
	return first
}
