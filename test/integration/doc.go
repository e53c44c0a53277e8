// Package integration runs the controller against a real kube-apiserver and
// etcd (envtest, with binaries built by hack/build-k8s.sh). No kubelet,
// scheduler or controller-manager runs: the tests play their part by
// writing Pod and Job status, and assert what the API server holds.
package integration
