package main

import (
	"bytes"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// LabelLocalKueue marks the webhook configurations made here, so that
// hack/kueue/down.sh and hack/cluster/up.sh find them without knowing
// their names.
const LabelLocalKueue = "mpi-operator.kubeflow.org/local-kueue"

// needed reports whether a webhook of Kueue's serves what an MPIJob under
// Kueue goes through: Kueue's own objects (queues, flavors, workloads) and
// MPIJobs. The webhooks of other frameworks (batch Jobs, Pods,
// Deployments, ...) are left out: registered, they would send every such
// object of the cluster through this process.
func needed(path string) bool {
	return strings.Contains(path, "-kueue-x-k8s-io-") || strings.HasSuffix(path, "-kubeflow-org-v2beta1-mpijob")
}

// localWebhooks reads Kueue's manifests.yaml (one Mutating and one
// Validating WebhookConfiguration) and returns both, renamed as Kueue's
// kustomization names them, with only the needed webhooks, each calling
// base+path with caBundle.
func localWebhooks(manifests []byte, base string, caBundle []byte) ([]byte, error) {
	var out bytes.Buffer
	for _, doc := range bytes.Split(manifests, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 || bytes.Equal(bytes.TrimSpace(doc), []byte("---")) {
			continue
		}
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("reading a manifest: %w", err)
		}
		var obj any
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			var c admissionv1.MutatingWebhookConfiguration
			if err := yaml.Unmarshal(doc, &c); err != nil {
				return nil, fmt.Errorf("reading %s: %w", meta.Kind, err)
			}
			c.Webhooks = keepLocal(c.Webhooks, func(w *admissionv1.MutatingWebhook) *admissionv1.WebhookClientConfig { return &w.ClientConfig }, base, caBundle)
			rename(&c.ObjectMeta)
			obj = c
		case "ValidatingWebhookConfiguration":
			var c admissionv1.ValidatingWebhookConfiguration
			if err := yaml.Unmarshal(doc, &c); err != nil {
				return nil, fmt.Errorf("reading %s: %w", meta.Kind, err)
			}
			c.Webhooks = keepLocal(c.Webhooks, func(w *admissionv1.ValidatingWebhook) *admissionv1.WebhookClientConfig { return &w.ClientConfig }, base, caBundle)
			rename(&c.ObjectMeta)
			obj = c
		default:
			return nil, fmt.Errorf("unexpected kind %q in Kueue's webhook manifests", meta.Kind)
		}
		raw, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", meta.Kind, err)
		}
		out.WriteString("---\n")
		out.Write(raw)
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("no webhook configuration in Kueue's manifests")
	}
	return out.Bytes(), nil
}

// local turns a Service client config into a URL one, when the webhook is
// needed.
func local(cc admissionv1.WebhookClientConfig, base string, caBundle []byte) (admissionv1.WebhookClientConfig, bool) {
	if cc.Service == nil || cc.Service.Path == nil || !needed(*cc.Service.Path) {
		return cc, false
	}
	return admissionv1.WebhookClientConfig{URL: ptr.To(base + *cc.Service.Path), CABundle: caBundle}, true
}

// rename gives a configuration the name Kueue's kustomization gives it
// (prefix "kueue-") and the LabelLocalKueue label.
func rename(meta *metav1.ObjectMeta) {
	meta.Name = "kueue-" + meta.Name
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	meta.Labels[LabelLocalKueue] = "true"
}

// keepLocal keeps the webhooks local serves, their client config pointed
// at the local server; both webhook configuration kinds hold the same
// client config under different webhook types.
func keepLocal[W any](ws []W, config func(*W) *admissionv1.WebhookClientConfig, base string, caBundle []byte) []W {
	var kept []W
	for _, w := range ws {
		if cc, ok := local(*config(&w), base, caBundle); ok {
			*config(&w) = cc
			kept = append(kept, w)
		}
	}
	return kept
}
