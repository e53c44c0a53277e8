package builder

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestAvoidNodesKeepsTheUsersAffinity(t *testing.T) {
	notIn := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"bad"}}
	gpu := corev1.NodeSelectorRequirement{Key: "gpu", Operator: corev1.NodeSelectorOpExists}
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	pref := []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}
	for name, tc := range map[string]struct {
		in, want *corev1.Affinity
	}{
		"none": {
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{notIn}}}}}},
		},
		"the user's terms each get it; preferences and pod affinity stay": {
			in: &corev1.Affinity{
				PodAffinity: &corev1.PodAffinity{},
				NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
						{MatchExpressions: []corev1.NodeSelectorRequirement{gpu}}, {MatchExpressions: []corev1.NodeSelectorRequirement{zone}},
					}},
					PreferredDuringSchedulingIgnoredDuringExecution: pref,
				},
			},
			want: &corev1.Affinity{
				PodAffinity: &corev1.PodAffinity{},
				NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
						{MatchExpressions: []corev1.NodeSelectorRequirement{gpu}, MatchFields: []corev1.NodeSelectorRequirement{notIn}},
						{MatchExpressions: []corev1.NodeSelectorRequirement{zone}, MatchFields: []corev1.NodeSelectorRequirement{notIn}},
					}},
					PreferredDuringSchedulingIgnoredDuringExecution: pref,
				},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			spec := &corev1.PodSpec{Affinity: tc.in}
			AvoidNodes(spec, []string{"bad"})
			if diff := cmp.Diff(tc.want, spec.Affinity); diff != "" {
				t.Errorf("affinity (-want +got):\n%s", diff)
			}
		})
	}
	spec := &corev1.PodSpec{}
	AvoidNodes(spec, nil)
	if spec.Affinity != nil {
		t.Errorf("no node to avoid, yet affinity %+v", spec.Affinity)
	}
}
