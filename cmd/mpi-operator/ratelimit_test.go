package main

import (
	"net/http"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// The clients the operator makes from its config, as controller-runtime
// and client-go make them, draw on one bucket; leader election on another.
func TestOneRateLimiterForEveryClient(t *testing.T) {
	cfg, leader := clientConfigs(&rest.Config{Host: "https://127.0.0.1:6443"}, 500, 1000)
	if cfg.RateLimiter == nil || cfg.RateLimiter.QPS() != 500 {
		t.Fatalf("rate limiter = %v, want one of 500 requests a second", cfg.RateLimiter)
	}
	if leader.RateLimiter != nil || leader.QPS != 500 || leader.Burst != 1000 {
		t.Errorf("leader election: QPS %v, burst %d, shared limiter %v; want 500 and 1000 in a bucket of its own",
			leader.QPS, leader.Burst, leader.RateLimiter)
	}

	limiterOf := func(gvk schema.GroupVersionKind) flowcontrol.RateLimiter {
		t.Helper()
		c, err := apiutil.RESTClientForGVK(gvk, false, false, cfg, clientgoscheme.Codecs, http.DefaultClient)
		if err != nil {
			t.Fatal(err)
		}
		return c.GetRateLimiter()
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]flowcontrol.RateLimiter{
		"controller-runtime's Pods":     limiterOf(corev1.SchemeGroupVersion.WithKind("Pod")),
		"controller-runtime's Jobs":     limiterOf(batchv1.SchemeGroupVersion.WithKind("Job")),
		"the clientset's core/v1":       clientset.CoreV1().RESTClient().GetRateLimiter(),
		"the clientset's authorization": clientset.AuthorizationV1().RESTClient().GetRateLimiter(),
	} {
		if got != cfg.RateLimiter {
			t.Errorf("%s: a rate limiter of its own, want the config's", name)
		}
	}
}

func TestNoRateLimiterWhenQPSIsNotPositive(t *testing.T) {
	for _, qps := range []float32{0, -1} {
		cfg, _ := clientConfigs(&rest.Config{}, qps, 0)
		if cfg.RateLimiter != nil || cfg.QPS != -1 {
			t.Errorf("--kube-api-qps %v: QPS %v, rate limiter %v; want -1 and none (client-go then does not limit)", qps, cfg.QPS, cfg.RateLimiter)
		}
	}
}
