// Package aws is Joinery's AWS adapter over aws-sdk-go-v2: EC2
// (CreateFleet launches, DescribeInstances, TerminateInstances, subnets,
// security groups, images, launch templates), SSM (the EKS image
// parameters), IAM (instance profiles), EKS (DescribeCluster) and SQS (the
// interruption queue), plus the insufficient-capacity (ICE) cache. It is
// called by activities and the controller and takes no decisions of its
// own: callers choose instance types, images, templates, subnets and
// capacity type; the adapter turns them into AWS calls and AWS answers into
// plain values and typed errors.
//
// Pointed at the local endpoints (sim/ec2, sim/ssm, sim/iam, sim/eks,
// sim/sqs) with the Options endpoints it uses static dummy credentials, so
// the local world needs no AWS account.
package aws
