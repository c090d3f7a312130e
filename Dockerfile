# toolgate's image: the static binary, run as a non-root user, with the
# programs the bundled packs run (jq, git, ripgrep, gh) on its PATH. The
# coding-agent packs (claude, codex, opencode) need those CLIs too: build
# FROM this image and install the ones your workspace uses.
#
#   docker build -t ghcr.io/toolgate/toolgate:latest .
#
# docs/deploy.md has the steps to build and push it; the build stage is
# scripts/build-release.sh, which the tests run (the image itself is not
# built by them).

# --- build: the static binary -------------------------------------------
FROM golang:1.26.8-alpine AS build
RUN apk add --no-cache git
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Set when the build context has no .git (see scripts/build-release.sh).
ARG TOOLGATE_VERSION=
ARG TOOLGATE_REVISION=
RUN scripts/build-release.sh /out/toolgate

# --- run: the binary and the packs' programs ------------------------------
FROM alpine:3.22
RUN apk add --no-cache ca-certificates jq git ripgrep github-cli tzdata \
 && addgroup -S -g 65532 toolgate \
 && adduser -S -D -H -u 65532 -G toolgate -h /tmp -s /sbin/nologin toolgate
COPY --from=build /out/toolgate /usr/local/bin/toolgate
# The user deploy/kubernetes/deployment.yaml runs as (runAsUser 65532).
USER 65532:65532
ENV HOME=/tmp TMPDIR=/tmp
WORKDIR /tmp
EXPOSE 7330
ENTRYPOINT ["/usr/local/bin/toolgate"]
CMD ["serve", "-w", "/etc/toolgate/toolgate.yaml"]
