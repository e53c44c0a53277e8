package main

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mpi-operator/mpi-operator/internal/dnsprobe"
)

// dnsCachesDenials reads --dns-caches-denials. auto asks the cluster's DNS
// (dnsprobe), from inside a cluster only (resolv.conf gave a search
// domain); outside one, or when the answers say nothing, it is no: the
// launchers ask DNS at once, as they always did.
func dnsCachesDenials(flag, searchDomain string) (bool, error) {
	switch flag {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "auto":
	default:
		return false, fmt.Errorf("--dns-caches-denials=%q: want auto, true or false", flag)
	}
	if searchDomain == "" {
		return false, nil
	}
	log := ctrl.Log.WithName("dns")
	server, err := dnsprobe.Nameserver("/etc/resolv.conf")
	if err != nil {
		log.Info("Cannot ask the cluster's DNS whether it caches denials; taking it that it does not", "error", err.Error())
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	caches, err := dnsprobe.CachesDenials(ctx, server, "svc."+searchDomain)
	if err != nil {
		log.Info("The cluster's DNS did not say whether it caches denials; taking it that it does not", "server", server, "error", err.Error())
		return false, nil
	}
	log.Info("Asked the cluster's DNS whether it caches denials", "server", server, "caches", caches)
	return caches, nil
}
