package configdoc

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Value is one entry of a chart's values.yaml.
type Value struct {
	// Path is the dotted key path, as --set takes it.
	Path string
	// Default is the value as YAML (flow style); empty for a mapping that
	// is listed only for its comment.
	Default string
	// Comment is the comment above the key, without the #s.
	Comment string
}

// ParseValues lists the keys of a values.yaml in file order: every leaf
// (a scalar, a list, an empty mapping), and every mapping that has a
// comment of its own, before its keys. The file's opening comment, set
// apart by a blank line, belongs to the file, not to its first key.
func ParseValues(data []byte) ([]Value, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parsing values: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("values: top level is not a mapping")
	}
	var vs []Value
	if err := walk(root, "", &vs); err != nil {
		return nil, err
	}
	return vs, nil
}

func walk(m *yaml.Node, prefix string, vs *[]Value) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		path := prefix + k.Value
		comment := commentText(k.HeadComment)
		if v.Kind == yaml.MappingNode && len(v.Content) > 0 {
			if comment != "" {
				*vs = append(*vs, Value{Path: path, Comment: comment})
			}
			if err := walk(v, path+".", vs); err != nil {
				return err
			}
			continue
		}
		def, err := flow(v)
		if err != nil {
			return fmt.Errorf("values: %s: %w", path, err)
		}
		*vs = append(*vs, Value{Path: path, Default: def, Comment: comment})
	}
	return nil
}

// flow is a value as one line of YAML: "" for an empty string, [] and {}
// for empty collections.
func flow(v *yaml.Node) (string, error) {
	c := *v
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	c.Style |= yaml.FlowStyle
	out, err := yaml.Marshal(&c)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// commentText is a head comment as one paragraph.
func commentText(c string) string {
	var words []string
	for _, line := range strings.Split(c, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
		if line != "" {
			words = append(words, line)
		}
	}
	return strings.Join(words, " ")
}
