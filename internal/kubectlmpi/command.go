package kubectlmpi

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// Options are what the plugin is given besides its flags.
type Options struct {
	Streams genericiooptions.IOStreams
	// LogSource, when set, replaces reading logs through the API server
	// (envtest runs no kubelet to serve them).
	LogSource LogSource
	// Now is the clock ages are counted to; time.Now when nil.
	Now func() time.Time
}

// plugin is a command line being run: the flags and the clients made
// from them.
type plugin struct {
	Options
	flags         *genericclioptions.ConfigFlags
	output        string
	allNamespaces bool
}

// NewCommand returns `kubectl mpi` with its subcommands, taking the
// kubeconfig flags every kubectl plugin takes (--kubeconfig, --context,
// --namespace, ...).
func NewCommand(o Options) *cobra.Command {
	if o.Now == nil {
		o.Now = time.Now
	}
	p := &plugin{Options: o, flags: genericclioptions.NewConfigFlags(true)}
	root := &cobra.Command{
		Use:           "kubectl-mpi",
		Short:         "Inspect MPIJobs: phase, workers, startup, failures, launcher logs",
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl mpi"},
	}
	root.SetIn(o.Streams.In)
	root.SetOut(o.Streams.Out)
	root.SetErr(o.Streams.ErrOut)
	p.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(p.getCommand(), p.describeCommand(), p.logsCommand(), p.hostfileCommand(), p.watchCommand(), p.versionCommand())
	return root
}

func (p *plugin) addOutputFlag(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&p.output, "output", "o", "", "output format: json or yaml (plain text when left out)")
}

// client makes a client of the MPIJob API and the core types.
func (p *plugin) client() (client.WithWatch, error) {
	cfg, err := p.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflow.AddToScheme(scheme))
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("making the client: %w", err)
	}
	return c, nil
}

// logSource is the given one, or else the API server's.
func (p *plugin) logSource() (LogSource, error) {
	if p.LogSource != nil {
		return p.LogSource, nil
	}
	cfg, err := p.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making the client: %w", err)
	}
	return APILogs{Clientset: cs}, nil
}

// namespace is --namespace, or else the kubeconfig context's.
func (p *plugin) namespace() (string, error) {
	ns, _, err := p.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	return ns, nil
}

// target is the client and the namespace a command works in.
func (p *plugin) target() (client.WithWatch, string, error) {
	c, err := p.client()
	if err != nil {
		return nil, "", err
	}
	ns, err := p.namespace()
	if err != nil {
		return nil, "", err
	}
	return c, ns, nil
}
