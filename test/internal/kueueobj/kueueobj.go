// Package kueueobj writes and reads Kueue's objects as unstructured ones,
// the way a user's YAML reads, for the suites that run against a real
// Kueue: they stay free of Kueue's Go module and of the versions of
// Kubernetes' modules it would pull in.
package kueueobj

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// API is the Kueue API version the suites write.
const API = "kueue.x-k8s.io/v1beta2"

// Object is a Kueue object of kind with the given top-level fields.
func Object(kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetAPIVersion(API)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// Condition reads a condition of a Kueue object's status.
func Condition(obj *unstructured.Unstructured, condType string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != condType {
			continue
		}
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		return s, r, msg
	}
	return "", "", ""
}

// WaitActive waits until Kueue calls obj (a ClusterQueue, an
// AdmissionCheck, a MultiKueueCluster) Active, reading it through c into
// obj: a mistake in its spec shows here, not as a job that never starts.
func WaitActive(t testing.TB, c client.Client, obj *unstructured.Unstructured) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, nil
		}
		status, _, _ := Condition(obj, "Active")
		return status == "True", nil
	})
	if err != nil {
		t.Fatalf("%s %s never Active: %v; status %v", obj.GetKind(), obj.GetName(), err, obj.Object["status"])
	}
}
