// Package cni is the local world's Amazon VPC CNI: the role of ipamd (the
// aws-node DaemonSet) on every node the local EC2 runs. It keeps each
// node's warm pool of ENIs and addresses as ipamd does under its settings
// (WARM_ENI_TARGET, WARM_IP_TARGET, MINIMUM_IP_TARGET, prefix delegation
// with WARM_PREFIX_TARGET, IP_COOLDOWN_PERIOD), drawing the addresses from
// the instance's subnet in the local EC2, and gives each pod that is not
// hostNetwork one of them. It learns a type's ENI limits only from EC2's
// description of the type (DescribeInstanceTypes' NetworkInfo). Prefixes
// the instance was launched with (the launch template's Ipv4PrefixCount)
// join the pool under prefix delegation and are given back at start
// without it, as ipamd does.
//
// A pod gets its address as the annotation vpc.amazonaws.com/pod-ips
// (the CNI's ANNOTATE_POD_IP); kwok starts a pod only once it carries it
// (sim/kube's pod-ready stage), so a pod on a node whose subnet ran dry
// stays ContainerCreating with the kubelet's FailedCreatePodSandBox Event,
// as on EKS.
package cni
