// Package validate checks the Kubernetes manifests in deploy/kubernetes
// without a cluster and without network access: its tests decode every
// manifest strictly into the typed Kubernetes API objects (unknown or
// misspelt fields are errors), check the references between them (selectors,
// ports, ConfigMaps, Secrets, probes, the autoscaler's target), and load the
// gateway configuration carried by the ConfigMap with the gateway's own
// config.Load.
//
// It is a module of its own so that the gateway's module does not depend on
// the Kubernetes API packages. Run it with
//
//	(cd deploy/kubernetes/validate && go test ./...)
//
// which .ci/run does after the main test suite.
package validate
