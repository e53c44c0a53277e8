package envtestutil

import (
	"fmt"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

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

// ConfigureAPIServer sets up the suites' API server as both suites run it:
// owner reference enforcement, WatchList off, and an audit log of the
// operator's requests in a new directory named after prefix (the caller
// removes it once the RBAC check passed).
func ConfigureAPIServer(env *envtest.Environment, prefix string) (*Audit, string, error) {
	EnableOwnerReferencesPermissionEnforcement(env)
	DisableWatchList(env)
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, "", err
	}
	audit, err := EnableAudit(env, dir)
	if err != nil {
		return nil, "", fmt.Errorf("configuring the audit log: %w", err)
	}
	return audit, dir, nil
}
