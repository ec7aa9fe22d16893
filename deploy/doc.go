// Package deploy holds the recipes for running wcmc on a cluster (see
// README.md): a Dockerfile, a Kubernetes Indexed Job with a pod to fetch
// its results, and a Slurm job array. It has no code; its test decodes the
// Kubernetes manifests strictly with the Kubernetes API types, offline.
// It is a module of its own, so that those types are not among the
// library's requirements: test it with `go test ./...` in this directory.
package deploy
