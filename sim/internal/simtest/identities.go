package simtest

import (
	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
)

// Worker is the worker role's session in account 123456789012, allowed
// what the policy document doc allows.
func Worker(doc string) awsauth.Identity {
	return awsauth.Identity{Name: "worker", ARN: "arn:aws:sts::123456789012:assumed-role/w/s", Account: "123456789012",
		AccessKeyID: "AKIAWORKER0000000001", SecretAccessKey: "w", Policies: []*policy.Policy{policy.MustParse("worker", []byte(doc))}}
}

// Stranger is id signing with an access key no guard knows.
func Stranger(id awsauth.Identity) awsauth.Identity {
	id.AccessKeyID = "AKIASTRANGER00000001"
	return id
}
