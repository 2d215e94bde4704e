// Package deploy holds no code. It is the home of the deployment artefacts
// (the Dockerfile at the repository root, docker-compose.yml, the Kubernetes
// manifests, Prometheus alert rules, the Grafana dashboard), and its tests
// keep them true to the gateway: they parse the Dockerfile and build its
// binary, load every configuration file with config.Load, run promtool on
// the alert rules, check every metric name in the dashboard and the alerts
// against what a running gateway exports, and scrape a gateway with a real
// Prometheus.
//
// The Kubernetes manifests are checked by a module of their own,
// deploy/kubernetes/validate, so that this module does not depend on the
// Kubernetes API packages.
package deploy
