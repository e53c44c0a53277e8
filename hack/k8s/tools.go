//go:build tools

// Package k8s pins the Kubernetes control-plane commands that the project's
// integration, end-to-end and benchmark clusters run. They cannot be
// downloaded on these machines, so hack/build-k8s.sh builds them from the Go
// module proxy; this file keeps them in go.mod for `go mod tidy`.
package k8s

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubeadm"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
