package main

import (
	"bufio"
	"os"
	"strings"
)

// clusterDomainFromResolvConf reads the cluster's DNS domain from the
// search list kubelet writes into every Pod ("<ns>.svc.<domain>
// svc.<domain> <domain>"), so that no flag is needed on a cluster whose
// domain is not cluster.local. Outside a cluster it finds nothing and
// the builder falls back to cluster.local.
func clusterDomainFromResolvConf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "search" {
			continue
		}
		for _, d := range fields[1:] {
			if domain, ok := strings.CutPrefix(strings.TrimSuffix(d, "."), "svc."); ok && domain != "" {
				return domain
			}
		}
	}
	return ""
}
