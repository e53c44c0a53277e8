// Package controller reconciles MPIJobs: it observes a job's children,
// makes the missing ones (in parallel, guarded by expectations against a
// stale cache), drives suspension, deadlines, cleanup and TTL, and writes
// the job's status at most once per reconcile, only when it changed. Events
// and metrics follow a successful status write, and only on transitions.
package controller
