package kubectlmpi

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
	"github.com/mpi-operator/mpi-operator/internal/builder"
)

func (p *plugin) getCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List MPIJobs: phase, workers running/total, restarts, age",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(p.output); err != nil {
				return err
			}
			jobs, err := p.summaries(cmd.Context(), args)
			if err != nil {
				return err
			}
			if p.output != "" {
				return writeStructured(p.Streams.Out, p.output, JobSummaryList{Items: jobs})
			}
			if len(jobs) == 0 {
				_, err := fmt.Fprintln(p.Streams.ErrOut, "No MPIJobs found.")
				return err
			}
			return WriteTable(p.Streams.Out, jobs, p.allNamespaces, p.Now())
		},
	}
	p.addOutputFlag(cmd)
	cmd.Flags().BoolVarP(&p.allNamespaces, "all-namespaces", "A", false, "list the MPIJobs of every namespace")
	return cmd
}

// summaries reads the jobs to list: the one named, or every one of the
// namespace (or of all namespaces), with their worker Pods in one list.
func (p *plugin) summaries(ctx context.Context, args []string) ([]JobSummary, error) {
	c, ns, err := p.target()
	if err != nil {
		return nil, err
	}
	if len(args) == 1 {
		job, err := getJob(ctx, c, ns, args[0])
		if err != nil {
			return nil, err
		}
		workers, _, err := jobPods(ctx, c, job)
		if err != nil {
			return nil, err
		}
		return []JobSummary{Summarize(job, workers)}, nil
	}
	var scope []client.ListOption
	if !p.allNamespaces {
		scope = append(scope, client.InNamespace(ns))
	}
	var jobs kubeflow.MPIJobList
	if err := c.List(ctx, &jobs, scope...); err != nil {
		return nil, fmt.Errorf("listing MPIJobs: %w", err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, append(scope, client.MatchingLabels{
		kubeflow.LabelOperatorName: kubeflow.OperatorName, kubeflow.LabelJobRole: builder.RoleWorker,
	})...); err != nil {
		return nil, fmt.Errorf("listing worker Pods: %w", err)
	}
	type key struct{ ns, job string }
	byJob := map[key][]corev1.Pod{}
	for _, pod := range pods.Items {
		k := key{pod.Namespace, pod.Labels[kubeflow.LabelJobName]}
		byJob[k] = append(byJob[k], pod)
	}
	out := make([]JobSummary, 0, len(jobs.Items))
	for i := range jobs.Items {
		j := &jobs.Items[i]
		out = append(out, Summarize(j, byJob[key{j.Namespace, j.Name}]))
	}
	slices.SortFunc(out, func(a, b JobSummary) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

func (p *plugin) describeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe NAME",
		Short: "Show an MPIJob's workers, launcher attempts, startup steps with their times, last failure and events",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(p.output); err != nil {
				return err
			}
			c, ns, err := p.target()
			if err != nil {
				return err
			}
			o, err := fetchObjects(cmd.Context(), c, ns, args[0])
			if err != nil {
				return err
			}
			d := Describe(o)
			if p.output != "" {
				return writeStructured(p.Streams.Out, p.output, d)
			}
			return WriteDescription(p.Streams.Out, &d, p.Now())
		},
	}
	p.addOutputFlag(cmd)
	return cmd
}

func (p *plugin) logsCommand() *cobra.Command {
	var opts LogsOptions
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print the launcher's log (mpirun's output): the current attempt, or every one with --all-attempts",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := p.target()
			if err != nil {
				return err
			}
			src, err := p.logSource()
			if err != nil {
				return err
			}
			job, err := getJob(cmd.Context(), c, ns, args[0])
			if err != nil {
				return err
			}
			_, launchers, err := jobPods(cmd.Context(), c, job)
			if err != nil {
				return err
			}
			if len(launchers) > 1 && !opts.AllAttempts {
				if _, err := fmt.Fprintf(p.Streams.ErrOut, "The launcher ran %d times; this is the latest. --all-attempts prints every one.\n", len(launchers)); err != nil {
					return err
				}
			}
			if err := WriteLogs(cmd.Context(), p.Streams.Out, src, launchers, opts); err != nil {
				return fmt.Errorf("MPIJob %s/%s: %w", ns, job.Name, err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "stream the current attempt's log")
	cmd.Flags().BoolVar(&opts.AllAttempts, "all-attempts", false, "print every attempt's log, oldest first, each under a header")
	cmd.Flags().StringVarP(&opts.Container, "container", "c", "", "launcher container (its first by default)")
	return cmd
}

func (p *plugin) hostfileCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hostfile NAME",
		Short: "Print the hostfile the operator wrote for an MPIJob",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(p.output); err != nil {
				return err
			}
			c, ns, err := p.target()
			if err != nil {
				return err
			}
			h, err := readHostfile(cmd.Context(), c, ns, args[0])
			if err != nil {
				return err
			}
			if p.output != "" {
				return writeStructured(p.Streams.Out, p.output, h)
			}
			_, err = fmt.Fprint(p.Streams.Out, h.Hostfile)
			return err
		},
	}
	p.addOutputFlag(cmd)
	return cmd
}
