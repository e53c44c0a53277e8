package kubectlmpi

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// Output formats of -o; plain text when empty.
const (
	OutputJSON = "json"
	OutputYAML = "yaml"
)

func checkOutput(format string) error {
	switch format {
	case "", OutputJSON, OutputYAML:
		return nil
	}
	return fmt.Errorf("unknown output format %q: use json or yaml, or leave -o out for text", format)
}

// writeStructured prints v as JSON or YAML.
func writeStructured(w io.Writer, format string, v any) error {
	var out []byte
	var err error
	if format == OutputJSON {
		out, err = json.MarshalIndent(v, "", "  ")
		out = append(out, '\n')
	} else {
		out, err = yaml.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("encoding the output: %w", err)
	}
	_, err = w.Write(out)
	return err
}
