// Package cloud is Joinery's EC2 adapter over aws-sdk-go-v2: CreateFleet
// launches, DescribeInstances, TerminateInstances, subnet and security group
// discovery, and the insufficient-capacity (ICE) cache. It is called by
// activities and takes no decisions of its own: callers choose instance
// types, their order, subnets and capacity type; the adapter turns them into
// EC2 calls and EC2 answers into plain values and typed errors.
//
// Pointed at the local endpoint (package sim/ec2) with Options.Endpoint it
// uses static dummy credentials, so the local world needs no AWS account.
package cloud
