package v2beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of MPIJob.
	GroupVersion = schema.GroupVersion{Group: "kubeflow.org", Version: "v2beta1"}

	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind is the kind of the MPIJob resource.
const Kind = "MPIJob"

func init() {
	SchemeBuilder.Register(&MPIJob{}, &MPIJobList{})
}
