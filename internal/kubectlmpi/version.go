package kubectlmpi

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mpi-operator/mpi-operator/internal/version"
)

// VersionInfo is the output of `kubectl mpi version` in JSON and YAML.
type VersionInfo struct {
	// Plugin is the release this plugin was built as; the operator's
	// release of the same number is the one it was tested with.
	Plugin string `json:"plugin"`
}

func (p *plugin) versionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's release version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(p.output); err != nil {
				return err
			}
			v := VersionInfo{Plugin: version.Version}
			if p.output != "" {
				return writeStructured(p.Streams.Out, p.output, v)
			}
			_, err := fmt.Fprintln(p.Streams.Out, "kubectl-mpi", v.Plugin)
			return err
		},
	}
	p.addOutputFlag(cmd)
	return cmd
}
