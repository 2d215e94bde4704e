package interceptors

import (
	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// allowOptions is empty: the allow type takes no options.
type allowOptions struct{}

// newAllow builds the "allow" type: an explicit passthrough. Enforce mode
// with no interceptors at all denies every request (host_error:
// no_interceptor, fail-closed); a deployment that means to proxy without a
// policy says so with an allow interceptor.
func newAllow(spec config.Interceptor, _ Env) (enforcement.Interceptor, error) {
	if err := spec.DecodeOptions(&allowOptions{}); err != nil {
		return nil, err
	}
	return fixedVerdict{enforcement.Allow()}, nil
}
