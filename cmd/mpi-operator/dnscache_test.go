package main

import "testing"

func TestDNSCachesDenialsFlag(t *testing.T) {
	for flag, want := range map[string]bool{"true": true, "false": false, "auto": false} {
		// auto outside a cluster (no search domain): no question asked.
		if got, err := dnsCachesDenials(flag, ""); err != nil || got != want {
			t.Errorf("%s: %t, %v; want %t", flag, got, err, want)
		}
	}
	if _, err := dnsCachesDenials("yes", ""); err == nil {
		t.Error("yes: no error, want one naming the flag")
	}
}
