package jobrecord

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	kubeflow "github.com/mpi-operator/mpi-operator/api/v2beta1"
)

// AnnotationHostfileWorkers, on an MPIJob, lists the workers the job's
// hostfile lists, as index ranges ("0-3 5", FormatIndices). The
// controller writes it before it rewrites the hostfile, and so before it
// deletes the workers a scale-down removes: whether a stopping worker
// belonged to the running attempt is then read from the MPIJob, whose
// writes carry optimistic concurrency, and not from a ConfigMap the cache
// may show late. Without it the hostfile was never rewritten and lists
// every worker.
const AnnotationHostfileWorkers = "mpi-operator.kubeflow.org/hostfile-workers"

// Indices is a set of worker indices, as increasing, disjoint ranges.
type Indices []IndexRange

// IndexRange is the indices from Lo to Hi, both included.
type IndexRange struct{ Lo, Hi int }

// IndicesOf returns the ranges of increasing indices.
func IndicesOf(sorted []int) Indices {
	var out Indices
	for _, i := range sorted {
		out = out.Append(i)
	}
	return out
}

// Append adds i, which is larger than every index in s.
func (s Indices) Append(i int) Indices {
	if n := len(s); n > 0 && s[n-1].Hi+1 == i {
		s[n-1].Hi = i
		return s
	}
	return append(s, IndexRange{i, i})
}

// Contains reports whether i is in the set.
func (s Indices) Contains(i int) bool {
	for _, r := range s {
		if i < r.Lo {
			return false
		}
		if i <= r.Hi {
			return true
		}
	}
	return false
}

// String writes the set as space-separated ranges: "0-3 5 7-9".
func (s Indices) String() string {
	var b strings.Builder
	for k, r := range s {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(r.Lo))
		if r.Hi > r.Lo {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(r.Hi))
		}
	}
	return b.String()
}

// ParseIndices reads what String writes; ranges must increase.
func ParseIndices(text string) (Indices, error) {
	var out Indices
	for _, f := range strings.Fields(text) {
		first, last, _ := strings.Cut(f, "-")
		lo, err1 := strconv.Atoi(first)
		hi, err2 := strconv.Atoi(cmp.Or(last, first))
		if err1 != nil || err2 != nil || lo < 0 || hi < lo || (len(out) > 0 && lo <= out[len(out)-1].Hi) {
			return nil, fmt.Errorf("bad index range %q", f)
		}
		out = append(out, IndexRange{lo, hi})
	}
	return out, nil
}

// HostfileWorkers reads AnnotationHostfileWorkers. Without it, or when it
// is unreadable (edited by hand), ok is false: the hostfile lists every
// worker.
func HostfileWorkers(job *kubeflow.MPIJob) (s Indices, ok bool) {
	raw, found := job.Annotations[AnnotationHostfileWorkers]
	if !found {
		return nil, false
	}
	s, err := ParseIndices(raw)
	return s, err == nil
}
