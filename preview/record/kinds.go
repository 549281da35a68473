package record

import "k8s.io/apimachinery/pkg/runtime/schema"

// Kind is one recorded kind: where it is listed and which fields are kept.
type Kind struct {
	Name       string
	Resource   schema.GroupVersionResource
	Namespaced bool
	// Keep are the field paths kept beside the metadata Trim keeps.
	Keep [][]string
	// PodTemplate: spec.template is a pod template (trimmed as a pod).
	PodTemplate bool
}

// Kinds are what a recording holds: the workload (pods with their owners,
// requests and scheduling constraints; the controllers that own them), the
// capacity (nodes, Karpenter's NodePools and EC2NodeClasses), and what
// scheduling and disruption read (PDBs, PriorityClasses, storage).
var Kinds = []Kind{
	{Name: "Pod", Resource: gvr("", "v1", "pods"), Namespaced: true, Keep: [][]string{
		{"spec", "nodeName"}, {"spec", "nodeSelector"}, {"spec", "affinity"}, {"spec", "tolerations"},
		{"spec", "topologySpreadConstraints"}, {"spec", "priorityClassName"}, {"spec", "priority"}, {"spec", "preemptionPolicy"},
		{"spec", "containers"}, {"spec", "initContainers"}, {"spec", "overhead"}, {"spec", "volumes"},
		{"spec", "schedulerName"}, {"spec", "runtimeClassName"}, {"spec", "hostNetwork"}, {"status", "phase"},
	}},
	{Name: "Node", Resource: gvr("", "v1", "nodes"), Keep: [][]string{
		{"spec", "taints"}, {"spec", "providerID"}, {"spec", "unschedulable"}, {"status", "capacity"}, {"status", "allocatable"},
	}},
	{Name: "Deployment", Resource: gvr("apps", "v1", "deployments"), Namespaced: true, Keep: [][]string{{"spec", "replicas"}, {"spec", "selector"}, {"spec", "template"}}, PodTemplate: true},
	{Name: "ReplicaSet", Resource: gvr("apps", "v1", "replicasets"), Namespaced: true, Keep: [][]string{{"spec", "replicas"}, {"spec", "selector"}}},
	{Name: "StatefulSet", Resource: gvr("apps", "v1", "statefulsets"), Namespaced: true, Keep: [][]string{{"spec", "replicas"}, {"spec", "selector"}, {"spec", "template"}}, PodTemplate: true},
	{Name: "DaemonSet", Resource: gvr("apps", "v1", "daemonsets"), Namespaced: true, Keep: [][]string{{"spec", "selector"}, {"spec", "template"}}, PodTemplate: true},
	{Name: "Job", Resource: gvr("batch", "v1", "jobs"), Namespaced: true, Keep: [][]string{{"spec", "parallelism"}, {"spec", "completions"}, {"spec", "template"}}, PodTemplate: true},
	{Name: "PodDisruptionBudget", Resource: gvr("policy", "v1", "poddisruptionbudgets"), Namespaced: true, Keep: [][]string{{"spec"}}},
	{Name: "PriorityClass", Resource: gvr("scheduling.k8s.io", "v1", "priorityclasses"), Keep: [][]string{{"value"}, {"globalDefault"}, {"preemptionPolicy"}}},
	{Name: "StorageClass", Resource: gvr("storage.k8s.io", "v1", "storageclasses"), Keep: [][]string{{"provisioner"}, {"volumeBindingMode"}, {"allowedTopologies"}}},
	{Name: "PersistentVolume", Resource: gvr("", "v1", "persistentvolumes"), Keep: [][]string{{"spec", "capacity"}, {"spec", "nodeAffinity"}, {"spec", "storageClassName"}, {"spec", "claimRef"}}},
	{Name: "PersistentVolumeClaim", Resource: gvr("", "v1", "persistentvolumeclaims"), Namespaced: true, Keep: [][]string{{"spec"}}},
	{Name: "NodePool", Resource: gvr("karpenter.sh", "v1", "nodepools"), Keep: [][]string{{"spec"}}},
	{Name: "EC2NodeClass", Resource: gvr("karpenter.k8s.aws", "v1", "ec2nodeclasses"), Keep: [][]string{{"spec"}}},
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}
