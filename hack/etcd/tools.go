//go:build tools

// Package etcd pins the etcd server that the project's control planes run;
// hack/build-k8s.sh builds it from the Go module proxy.
package etcd

import _ "go.etcd.io/etcd/server/v3"
