package kube

import _ "embed"

// kwokStages is kwok's Stage configuration: the standalone kwok binary ships no
// default stages and exits with "no stages found" without one. It is the
// concatenation of sigs.k8s.io/kwok@v0.8.0 kustomize/stage/{node/fast/node-initialize,
// node/heartbeat/node-heartbeat, pod/fast/pod-ready, pod/fast/pod-complete,
// pod/fast/pod-delete}.yaml: nodes become Ready with the capacity the creator
// set and keep heartbeating, bound pods become Running, Job pods complete, and
// pods with a deletionTimestamp are deleted (the kubelet's part of an eviction).
// A bound pod starts only once the VPC CNI (sim/cni) gave it an address, or
// when it is hostNetwork, so a pod without an address stays ContainerCreating.
//
//go:embed kwok-stages.yaml
var kwokStages []byte

// Kwok conventions.
const (
	// KwokNodeAnnotation marks the Nodes kwok manages (value KwokNodeAnnotationValue);
	// an autoscaler in the local world sets it on every Node it registers.
	KwokNodeAnnotation      = "kwok.x-k8s.io/node"
	KwokNodeAnnotationValue = "fake"

	kwokStagesFile = "kwok-stages.yaml"
	kwokNodePort   = 10247           // reported as the kubelet port in Node status; nothing listens there
	kwokPodCIDR    = "10.244.0.1/16" // pod IPs kwok writes into Pod status
)
