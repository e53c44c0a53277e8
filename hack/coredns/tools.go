//go:build tools

// Package coredns pins the cluster DNS server of the project's local
// cluster; hack/build-k8s.sh builds it from the Go module proxy.
package coredns

import _ "github.com/coredns/coredns"
