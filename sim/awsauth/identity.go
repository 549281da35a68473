package awsauth

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/joinery/joinery/sim/awsauth/policy"
)

// Identity is one principal of the local world: its access key and the
// identity-based policies attached to it.
type Identity struct {
	// Name names the identity in records and logs ("worker", "admin").
	Name string
	// ARN is the caller's ARN, as AWS names it in refusals (an assumed
	// role's session: arn:aws:sts::<account>:assumed-role/<role>/<session>).
	ARN string
	// RoleARN, for an assumed-role session, is the role's ARN: the
	// aws:PrincipalArn condition key (empty: ARN).
	RoleARN string
	// Account is the principal's account (aws:PrincipalAccount).
	Account                      string
	AccessKeyID, SecretAccessKey string
	Policies                     []*policy.Policy
}

// Credentials are the identity's SDK credentials (static, no session).
func (i Identity) Credentials() aws.Credentials {
	return aws.Credentials{AccessKeyID: i.AccessKeyID, SecretAccessKey: i.SecretAccessKey, Source: "joinery local world (" + i.Name + ")"}
}

// CredentialsProvider serves the identity's key to an SDK client.
func (i Identity) CredentialsProvider() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(i.AccessKeyID, i.SecretAccessKey, "")
}
