# hooks-gateway container image.
#
#   docker build -t hooks-gateway .
#   docker run --rm -p 8080:8080 hooks-gateway      # embedded default: mock model, demo policy
#   docker run --rm -p 8080:8080 -v "$PWD/gateway.yaml:/etc/hooks-gateway/gateway.yaml:ro" \
#     hooks-gateway --config /etc/hooks-gateway/gateway.yaml
#
# The image listens on :8080 (HOOKS_GATEWAY_LISTEN; the embedded default
# alone would listen on loopback, unreachable through -p). On that address
# the gateway refuses to start with a real upstream (OPENAI_API_KEY set, or a
# config naming one) unless the config has client keys or says
# auth: {mode: none}: see docs/auth.md.
#
# Two stages: a Go toolchain builds one static binary (CGO_ENABLED=0), and a
# distroless "static" image runs it as an unprivileged user. The runtime
# image has no shell, no package manager and no curl; it does carry CA
# certificates (for https upstreams) and tzdata.
#
# The HEALTHCHECK runs the binary itself (`hooks-gateway healthcheck` GETs
# /healthz), since the runtime image has no shell or curl. Orchestrators
# probe over HTTP instead: GET /healthz (liveness) and GET /readyz
# (readiness: policy loaded and session store reachable);
# deploy/kubernetes/gateway.yaml shows the probes. deploy/docker_test.go
# checks this file's shape on every test run.

# The builder runs on the build machine's platform and cross-compiles for
# the target (docker buildx build --platform linux/amd64,linux/arm64 .).
# $BUILDPLATFORM needs BuildKit, Docker's default builder since 23.0.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
# Modules first, so source edits do not invalidate the download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Set by BuildKit (the default builder) for the platform being built; empty
# otherwise, which makes Go build for the build machine.
ARG TARGETOS
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/hooks-gateway ./cmd/hooks-gateway

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/hooks-gateway /hooks-gateway
# 65532 is distroless' "nonroot" user. Numeric, so Kubernetes'
# runAsNonRoot can verify it without reading /etc/passwd.
USER 65532:65532
ENV HOOKS_GATEWAY_LISTEN=:8080
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s CMD ["/hooks-gateway", "healthcheck"]
ENTRYPOINT ["/hooks-gateway"]
