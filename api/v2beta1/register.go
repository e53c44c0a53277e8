package v2beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of MPIJob.
	GroupVersion = schema.GroupVersion{Group: "kubeflow.org", Version: "v2beta1"}

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind is the kind of the MPIJob resource.
const Kind = "MPIJob"

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &MPIJob{}, &MPIJobList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
