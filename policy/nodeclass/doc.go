// Package nodeclass holds the EC2NodeClass policy Joinery resolves and
// launches from, as pure functions: which SSM parameters an AMI alias
// reads, which image serves which instance types, the status conditions,
// the launch template's content name, the instance profile's name, and
// when a node has drifted from what its class resolves to now. The
// reconciler in controller/ and the launch activity feed it what EC2, SSM
// and IAM answered; nothing here calls out.
package nodeclass
