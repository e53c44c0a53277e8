package envtestutil

import "sigs.k8s.io/controller-runtime/pkg/envtest"

// EnableOwnerReferencesPermissionEnforcement turns on the admission plugin
// that refuses a child whose owner reference blocks its owner's deletion
// unless the creator may update the owner's finalizers (OpenShift and
// hardened clusters run it). Its check makes no request of its own, so
// without the plugin nothing would prove that grant is needed.
func EnableOwnerReferencesPermissionEnforcement(env *envtest.Environment) {
	env.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
}

// DisableWatchList serves lists only as lists, as Kubernetes 1.33 and
// releases before 1.32 do (the WatchList feature off): client-go's
// informers then list and watch instead of asking for a watch that
// streams the initial state. Its requests are a superset of the streaming
// ones (watch), so the RBAC check sees every verb the operator's cache may
// use; client-go also falls back to listing when a streaming watch fails.
func DisableWatchList(env *envtest.Environment) {
	env.ControlPlane.GetAPIServer().Configure().Append("feature-gates", "WatchList=false")
}
