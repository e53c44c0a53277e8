package controller

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// nonZero is a value of type t that is not its zero value, nor empty.
func nonZero(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		p.Elem().Set(nonZero(t.Elem()))
		v.Set(p)
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(t, 0, 1), nonZero(t.Elem())))
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(nonZero(t.Key()), nonZero(t.Elem()))
	case reflect.Struct:
		v.Field(0).Set(nonZero(t.Field(0).Type))
	default:
		panic("nonZero: no value for " + t.String())
	}
	return v
}

// TestSameEndpointsComparesEveryField: an endpoint that differs from
// another in any one field, a condition's included, is a different one,
// as equality.Semantic.DeepEqual says; and equal values behind different
// pointers are the same. A field the API adds fails the test until
// sameEndpoints compares it.
func TestSameEndpointsComparesEveryField(t *testing.T) {
	type variant struct {
		name string
		e    discoveryv1.Endpoint
	}
	var variants []variant
	et := reflect.TypeFor[discoveryv1.Endpoint]()
	for i := range et.NumField() {
		f := et.Field(i)
		if f.Type == reflect.TypeFor[discoveryv1.EndpointConditions]() {
			for j := range f.Type.NumField() {
				var e discoveryv1.Endpoint
				reflect.ValueOf(&e).Elem().Field(i).Field(j).Set(nonZero(f.Type.Field(j).Type))
				variants = append(variants, variant{f.Name + "." + f.Type.Field(j).Name, e})
			}
			continue
		}
		var e discoveryv1.Endpoint
		reflect.ValueOf(&e).Elem().Field(i).Set(nonZero(f.Type))
		variants = append(variants, variant{f.Name, e})
	}
	if want := 8 - 1 + 3; len(variants) != want {
		t.Fatalf("discoveryv1.Endpoint has %d fields (conditions counted one by one), sameEndpoints knows %d: compare the new ones", len(variants), want)
	}
	for _, v := range variants {
		zero := []discoveryv1.Endpoint{{}}
		one := []discoveryv1.Endpoint{v.e}
		if sameEndpoints(zero, one) || equality.Semantic.DeepEqual(zero, one) {
			t.Errorf("%s: endpoints that differ in it are the same", v.name)
		}
		if copied := []discoveryv1.Endpoint{*v.e.DeepCopy()}; !sameEndpoints(one, copied) {
			t.Errorf("%s: a deep copy differs", v.name)
		}
	}
	if !sameEndpoints(nil, []discoveryv1.Endpoint{}) || !sameEndpoints([]discoveryv1.Endpoint{{Addresses: []string{}}}, []discoveryv1.Endpoint{{}}) {
		t.Error("empty and missing lists differ; the API server drops empty lists")
	}
}

// TestEndpointChanges: which wanted slices are written, and whether they
// only add addresses (then the write may be paced).
func TestEndpointChanges(t *testing.T) {
	ep := func(pod, ip string) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, Hostname: ptr.To(pod),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: pod, UID: types.UID(pod)}}
	}
	slice := func(name string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		sl := &discoveryv1.EndpointSlice{Endpoints: eps}
		sl.Name = name
		return sl
	}
	a, b, c := ep("a", "10.0.0.1"), ep("b", "10.0.0.2"), ep("c", "10.0.0.3")
	for _, tc := range []struct {
		name    string
		live    []*discoveryv1.EndpointSlice
		want    []*discoveryv1.EndpointSlice
		changed []string
		grows   bool
	}{
		{name: "nothing new", live: []*discoveryv1.EndpointSlice{slice("s0", a, b)}, want: []*discoveryv1.EndpointSlice{slice("s0", a, b)}, grows: true},
		{name: "a slice fills up", live: []*discoveryv1.EndpointSlice{slice("s0", a)}, want: []*discoveryv1.EndpointSlice{slice("s0", a, b)}, changed: []string{"s0"}, grows: true},
		{name: "a new slice", want: []*discoveryv1.EndpointSlice{slice("s0", a)}, changed: []string{"s0"}, grows: true},
		{name: "an address goes", live: []*discoveryv1.EndpointSlice{slice("s0", a, b)}, want: []*discoveryv1.EndpointSlice{slice("s0", a)}, changed: []string{"s0"}},
		{name: "an address changes", live: []*discoveryv1.EndpointSlice{slice("s0", a)}, want: []*discoveryv1.EndpointSlice{slice("s0", ep("a", "10.0.0.9"))}, changed: []string{"s0"}},
		{name: "an address moves to another slice",
			live:    []*discoveryv1.EndpointSlice{slice("s0", a, b), slice("s1", c)},
			want:    []*discoveryv1.EndpointSlice{slice("s0", a), slice("s1", b, c)},
			changed: []string{"s0", "s1"}, grows: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := map[string]*discoveryv1.EndpointSlice{}
			for _, sl := range tc.live {
				live[sl.Name] = sl
			}
			changes, grows := endpointChanges(live, tc.want)
			var names []string
			for _, sl := range changes {
				names = append(names, sl.Name)
			}
			if !reflect.DeepEqual(names, tc.changed) || grows != tc.grows {
				t.Errorf("changed %v, grows %t; want %v, %t", names, grows, tc.changed, tc.grows)
			}
		})
	}
}
