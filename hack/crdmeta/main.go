// Command crdmeta declares metadata.name in the root schema of a CRD that
// controller-gen wrote: controller-gen leaves the root's metadata an
// untyped object, and the API server then refuses a CEL rule's fieldPath
// of ".metadata.name" ("must be a valid path"). Without the fieldPath the
// rules on the job's name are reported at "<nil>". The API server allows
// the root's metadata to declare name and generateName, and nothing else.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	flag.Usage = func() {
		_, _ = fmt.Fprintln(flag.CommandLine.Output(), "usage: crdmeta CRD.yaml...")
		flag.PrintDefaults()
	}
	flag.Parse()
	for _, path := range flag.Args() {
		if err := declareName(path); err != nil {
			log.Fatalf("%s: %v", path, err)
		}
	}
}

func declareName(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return err
	}
	versions, _ := dig(crd, "spec", "versions").([]any)
	if len(versions) == 0 {
		return fmt.Errorf("no spec.versions")
	}
	for _, v := range versions {
		props, ok := dig(v, "schema", "openAPIV3Schema", "properties").(map[string]any)
		if !ok {
			return fmt.Errorf("a version without schema.openAPIV3Schema.properties")
		}
		props["metadata"] = map[string]any{
			"type":       "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}},
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	// controller-gen opens each file with a document marker.
	if bytes.HasPrefix(raw, []byte("---\n")) {
		out = append([]byte("---\n"), out...)
	}
	return os.WriteFile(path, out, 0o644)
}

// dig walks nested maps by key; nil when a key is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
