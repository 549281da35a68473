# syntax=docker/dockerfile:1
# The Joinery worker (worker/main.go) as a static binary on distroless.
#   docker build -t joinery-worker .
# Go version: the go directive of go.mod (deploy/compose_test.go checks it).
FROM golang:1.26.8 AS build
WORKDIR /src
ENV GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
COPY go.mod go.sum ./
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w" -o /out/joinery-worker ./worker

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/joinery-worker /usr/local/bin/joinery-worker
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/joinery-worker"]
