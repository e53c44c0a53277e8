package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// A cut of Kueue's manifests.yaml: one webhook the MPIJob path needs and
// one it does not, per configuration.
const manifests = `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-batch-v1-job}
  name: mjob.kb.io
  sideEffects: None
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-kubeflow-org-v2beta1-mpijob}
  name: mmpijob.kb.io
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-kueue-x-k8s-io-v1beta2-workload}
  name: vworkload.kb.io
  sideEffects: None
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate--v1-pod}
  name: vpod.kb.io
  sideEffects: None
`

func TestLocalWebhooksKeepOnlyMPIJobAndKueueObjects(t *testing.T) {
	out, err := localWebhooks([]byte(manifests), "https://127.0.0.1:9443", []byte("CA"))
	if err != nil {
		t.Fatal(err)
	}
	docs := splitDocs(out)
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2:\n%s", len(docs), out)
	}
	var m admissionv1.MutatingWebhookConfiguration
	var v admissionv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(docs[0], &m); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(docs[1], &v); err != nil {
		t.Fatal(err)
	}
	type hook struct{ Config, Name, URL, CA string }
	var got []hook
	for _, w := range m.Webhooks {
		got = append(got, hook{m.Name, w.Name, *w.ClientConfig.URL, string(w.ClientConfig.CABundle)})
	}
	for _, w := range v.Webhooks {
		got = append(got, hook{v.Name, w.Name, *w.ClientConfig.URL, string(w.ClientConfig.CABundle)})
	}
	want := []hook{
		{"kueue-mutating-webhook-configuration", "mmpijob.kb.io", "https://127.0.0.1:9443/mutate-kubeflow-org-v2beta1-mpijob", "CA"},
		{"kueue-validating-webhook-configuration", "vworkload.kb.io", "https://127.0.0.1:9443/validate-kueue-x-k8s-io-v1beta2-workload", "CA"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webhooks (-want +got):\n%s", diff)
	}
	if m.Labels[LabelLocalKueue] != "true" || v.Labels[LabelLocalKueue] != "true" {
		t.Errorf("labels %v and %v, want %s on both", m.Labels, v.Labels, LabelLocalKueue)
	}
}

func splitDocs(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range strings.Split(string(b), "---\n") {
		if d != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}
