// Package fuzz holds the fuzz target whose judge is a real kube-apiserver
// (envtest, with binaries built by hack/build-k8s.sh): every job the API
// server admits and Validate accepts must yield children the API server
// accepts. The fuzz target of the reconciler, which needs no API server,
// is in internal/controller.
package fuzz
