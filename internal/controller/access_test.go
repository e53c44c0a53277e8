package controller

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// accessScheme and accessMapper know the kinds the cache holds.
func accessScheme(t *testing.T) (*runtime.Scheme, meta.RESTMapper) {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := kubeflow.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	m := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []schema.GroupVersionKind{
		kubeflow.GroupVersion.WithKind(kubeflow.Kind),
		{Version: "v1", Kind: "Pod"}, {Version: "v1", Kind: "Service"},
		{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"},
		{Group: "batch", Version: "v1", Kind: "Job"},
		{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
	} {
		m.Add(gvk, meta.RESTScopeNamespace)
	}
	return s, m
}

// reviewer answers each access review with allow, and records what it
// was asked as "verb resource.group namespace".
func reviewer(allow func(a *authorizationv1.ResourceAttributes) bool, asked *[]string) *fake.Clientset {
	c := fake.NewClientset()
	c.PrependReactor("create", "selfsubjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		r := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		a := r.Spec.ResourceAttributes
		*asked = append(*asked, a.Verb+" "+qualified(a.Group, a.Resource)+" "+a.Namespace)
		r.Status.Allowed = allow(a)
		return true, r, nil
	})
	return c
}

func TestCheckAccess(t *testing.T) {
	scheme, mapper := accessScheme(t)
	clusterWide := CacheOptions(nil, nil)
	twoNamespaces := CacheOptions([]string{"b", "a"}, nil)
	for _, tc := range []struct {
		name    string
		allow   func(a *authorizationv1.ResourceAttributes) bool
		asks    int
		wantErr []string
	}{{
		name:  "everything granted across the cluster",
		allow: func(*authorizationv1.ResourceAttributes) bool { return true },
		asks:  14,
	}, {
		name: "namespaced grants to an operator that serves every namespace",
		allow: func(a *authorizationv1.ResourceAttributes) bool {
			return a.Namespace != ""
		},
		asks: 14,
		wantErr: []string{"list pods at the cluster scope", "watch mpijobs.kubeflow.org at the cluster scope",
			"watch jobs.batch at the cluster scope", "--namespace"},
	}, {
		name: "watch on Secrets refused",
		allow: func(a *authorizationv1.ResourceAttributes) bool {
			return a.Resource != "secrets" || a.Verb != "watch"
		},
		asks:    14,
		wantErr: []string{"may not watch secrets at the cluster scope: grant"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			err := CheckAccess(context.Background(), reviewer(tc.allow, &asked).AuthorizationV1().SelfSubjectAccessReviews(), mapper, scheme, clusterWide)
			if len(asked) != tc.asks {
				t.Errorf("%d reviews, want %d: %q", len(asked), tc.asks, asked)
			}
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("CheckAccess: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckAccess passed, want an error saying %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}

	t.Run("an operator given namespaces asks in each of them", func(t *testing.T) {
		var asked []string
		allow := func(a *authorizationv1.ResourceAttributes) bool { return a.Namespace == "a" }
		err := CheckAccess(context.Background(), reviewer(allow, &asked).AuthorizationV1().SelfSubjectAccessReviews(), mapper, scheme, twoNamespaces)
		if len(asked) != 28 {
			t.Errorf("%d reviews, want 28: %q", len(asked), asked)
		}
		if err == nil || !strings.Contains(err.Error(), "list configmaps in namespace b") || strings.Contains(err.Error(), "namespace a") {
			t.Errorf("error %v, want namespace b's permissions alone named", err)
		}
		if err != nil && strings.Contains(err.Error(), "--namespace") {
			t.Errorf("error %q suggests --namespace to an operator that has it", err)
		}
	})

	t.Run("a cluster that refuses the reviews themselves", func(t *testing.T) {
		c := fake.NewClientset()
		c.PrependReactor("create", "selfsubjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}, "", nil)
		})
		if err := CheckAccess(context.Background(), c.AuthorizationV1().SelfSubjectAccessReviews(), mapper, scheme, clusterWide); err != nil {
			t.Errorf("CheckAccess: %v; want the question left to the cache", err)
		}
	})

	t.Run("the MPIJob CRD not installed", func(t *testing.T) {
		var asked []string
		empty := meta.NewDefaultRESTMapper(nil)
		allow := func(*authorizationv1.ResourceAttributes) bool { return true }
		err := CheckAccess(context.Background(), reviewer(allow, &asked).AuthorizationV1().SelfSubjectAccessReviews(), empty, scheme, clusterWide)
		if err == nil || !strings.Contains(err.Error(), "MPIJob") || !strings.Contains(err.Error(), "CRD") {
			t.Errorf("error %v, want one naming the MPIJob CRD", err)
		}
	})
}
