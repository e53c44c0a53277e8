package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// CheckAccess asks with SelfSubjectAccessReviews (which every
// authenticated user may create), before the cache starts, whether the operator may
// list and watch every kind the cache opts hold (and MPIJobs) in the
// namespaces it serves, or the whole cluster when it names none. A
// refused list or watch otherwise leaves the cache unsynced for ever:
// the operator never acts, never becomes ready, and logs only the
// informer's retries. The error names each missing permission and its
// scope, so that the Deployment's logs say what to grant.
func CheckAccess(ctx context.Context, reviewer authorizationclient.SelfSubjectAccessReviewInterface, mapper meta.RESTMapper, scheme *runtime.Scheme, opts cache.Options) error {
	objs := []client.Object{&kubeflow.MPIJob{}}
	for obj := range opts.ByObject {
		objs = append(objs, obj)
	}
	namespaces := []string{""}
	if len(opts.DefaultNamespaces) > 0 {
		namespaces = namespaces[:0]
		for ns := range opts.DefaultNamespaces {
			namespaces = append(namespaces, ns)
		}
		sort.Strings(namespaces)
	}
	var missing []string
	for _, obj := range objs {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return err
		}
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("the API server does not serve %s (is its CRD installed?): %w", gvk, err)
		}
		for _, ns := range namespaces {
			for _, verb := range []string{"list", "watch"} {
				ok, err := allowed(ctx, reviewer, m.Resource.Group, m.Resource.Resource, verb, ns)
				if err != nil {
					return err
				}
				if !ok {
					missing = append(missing, verb+" "+qualified(m.Resource.Group, m.Resource.Resource)+" "+scope(ns))
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	hint := "grant them (config/rbac has the operator's ClusterRole)"
	if len(opts.DefaultNamespaces) == 0 {
		hint += ", or name the namespaces to serve with --namespace"
	}
	return fmt.Errorf("the operator may not %s: %s", strings.Join(missing, "; "), hint)
}

// allowed reports whether the caller may do verb on resource in ns ("":
// across the cluster).
func allowed(ctx context.Context, reviewer authorizationclient.SelfSubjectAccessReviewInterface, group, resource, verb, ns string) (bool, error) {
	review, err := reviewer.Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: group, Resource: resource, Verb: verb, Namespace: ns,
		}},
	}, metav1.CreateOptions{})
	// A cluster that refuses the review itself leaves the question to
	// the cache, as before this check.
	if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("asking whether the operator may %s %s %s: %w", verb, qualified(group, resource), scope(ns), err)
	}
	return review.Status.Allowed, nil
}

func qualified(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

func scope(ns string) string {
	if ns == "" {
		return "at the cluster scope"
	}
	return "in namespace " + ns
}
