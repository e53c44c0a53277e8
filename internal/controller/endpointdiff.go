package controller

import (
	"maps"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// endpointChanges are the wanted slices that differ from the live ones,
// and whether they only add addresses: no address of a live slice is
// missing from the wanted ones (it may have moved to another slice).
//
// Every reconcile of a starting job compares its slices, so this is
// written for a large one: compared with equality.Semantic.DeepEqual, and
// with each address named by a string built for it, the comparison was a
// quarter of the operator's CPU while a 10,000-worker job started (a CPU
// profile, docs/records/scale-history.md).
func endpointChanges(live map[string]*discoveryv1.EndpointSlice, want []*discoveryv1.EndpointSlice) ([]*discoveryv1.EndpointSlice, bool) {
	var changes []*discoveryv1.EndpointSlice
	grows := true
	var kept map[endpointAddress]bool // every wanted address, made when needed
	for _, w := range want {
		h := live[w.Name]
		if h != nil && sameEndpoints(h.Endpoints, w.Endpoints) {
			continue
		}
		changes = append(changes, w)
		if h == nil || !grows || keepsAll(h, w) {
			continue
		}
		if kept == nil {
			kept = map[endpointAddress]bool{}
			for _, sl := range want {
				forEachAddress(sl, func(a endpointAddress) { kept[a] = true })
			}
		}
		forEachAddress(h, func(a endpointAddress) { grows = grows && kept[a] })
	}
	return changes, grows
}

// endpointAddress names an endpoint's address by its Pod and address.
type endpointAddress struct {
	pod  types.UID
	addr string
}

func forEachAddress(sl *discoveryv1.EndpointSlice, fn func(endpointAddress)) {
	for i := range sl.Endpoints {
		e := &sl.Endpoints[i]
		var pod types.UID
		if e.TargetRef != nil {
			pod = e.TargetRef.UID
		}
		for _, a := range e.Addresses {
			fn(endpointAddress{pod: pod, addr: a})
		}
	}
}

// keepsAll reports whether the wanted slice w has every address of the
// live slice h: as a slice fills up, the common case.
func keepsAll(h, w *discoveryv1.EndpointSlice) bool {
	has := make(map[endpointAddress]bool, len(w.Endpoints))
	forEachAddress(w, func(a endpointAddress) { has[a] = true })
	all := true
	forEachAddress(h, func(a endpointAddress) { all = all && has[a] })
	return all
}

// sameEndpoints is equality.Semantic.DeepEqual for endpoints, field by
// field: about the same answer (TestSameEndpointsComparesEveryField keeps
// the fields in step with the API's), without reflection.
func sameEndpoints(a, b []discoveryv1.Endpoint) bool {
	return slices.EqualFunc(a, b, func(x, y discoveryv1.Endpoint) bool {
		return slices.Equal(x.Addresses, y.Addresses) &&
			ptr.Equal(x.Conditions.Ready, y.Conditions.Ready) &&
			ptr.Equal(x.Conditions.Serving, y.Conditions.Serving) &&
			ptr.Equal(x.Conditions.Terminating, y.Conditions.Terminating) &&
			ptr.Equal(x.Hostname, y.Hostname) &&
			(x.TargetRef == nil) == (y.TargetRef == nil) && (x.TargetRef == nil || *x.TargetRef == *y.TargetRef) &&
			maps.Equal(x.DeprecatedTopology, y.DeprecatedTopology) &&
			ptr.Equal(x.NodeName, y.NodeName) &&
			ptr.Equal(x.Zone, y.Zone) &&
			(x.Hints == nil && y.Hints == nil || equality.Semantic.DeepEqual(x.Hints, y.Hints))
	})
}
