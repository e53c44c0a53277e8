package builder

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// AvoidNodes keeps a Pod off the given nodes: a required node affinity on
// the node's name, added to each of the template's own terms (terms are
// ORed, the requirements of a term ANDed), or as the one term when the
// template has none. The user's affinity is otherwise kept. It matches
// metadata.name, not the hostname label, which differs from the node's
// name on some clouds.
func AvoidNodes(spec *corev1.PodSpec, nodes []string) {
	if len(nodes) == 0 {
		return
	}
	req := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: slices.Clone(nodes)}
	// A copy: the template's own may be shared with the MPIJob.
	spec.Affinity = spec.Affinity.DeepCopy()
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{req}}},
		}
		return
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		terms[i].MatchFields = append(terms[i].MatchFields, req)
	}
}
