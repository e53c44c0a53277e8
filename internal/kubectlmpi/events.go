package kubectlmpi

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Event is one of the MPIJob's events.
type Event struct {
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Count is how many times it happened (1 for a single one).
	Count int32 `json:"count"`
	// LastSeen is when it last happened.
	LastSeen metav1.Time `json:"lastSeen"`
}

// Events turns core/v1 Events (which include those written through
// events.k8s.io/v1, as the operator does) into the plugin's, oldest first.
func Events(list []corev1.Event) []Event {
	out := make([]Event, 0, len(list))
	for i := range list {
		e := &list[i]
		count := e.Count
		if e.Series != nil {
			count = e.Series.Count
		}
		out = append(out, Event{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: max(count, 1), LastSeen: lastSeen(e)})
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.LastSeen.Compare(b.LastSeen.Time) })
	return out
}

// lastSeen is when the event last happened, from whichever of its fields
// the writer used: core/v1 writers set lastTimestamp, events.k8s.io/v1
// writers eventTime and series.
func lastSeen(e *corev1.Event) metav1.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return metav1.NewTime(e.Series.LastObservedTime.Time)
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.NewTime(e.EventTime.Time)
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp
	}
	return e.CreationTimestamp
}
