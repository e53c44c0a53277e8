package jobrecord

import (
	"slices"
	"testing"
)

func TestIndicesRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		text string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 3, 5, 7, 8, 9}, "0-3 5 7-9"},
	} {
		s := IndicesOf(tc.in)
		if got := s.String(); got != tc.text {
			t.Errorf("IndicesOf(%v) = %q, want %q", tc.in, got, tc.text)
		}
		back, err := ParseIndices(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 11 {
			if back.Contains(i) != slices.Contains(tc.in, i) {
				t.Errorf("%q: Contains(%d) = %v", tc.text, i, back.Contains(i))
			}
		}
	}
	for _, bad := range []string{"x", "3-1", "-1", "2 1", "0-3 3"} {
		if _, err := ParseIndices(bad); err == nil {
			t.Errorf("ParseIndices(%q) took it", bad)
		}
	}
}
