// Package awsauth authenticates and authorizes the local world's AWS
// calls as AWS does, so that the local world is never kinder than an
// account: every request to the local EC2, IAM, SSM, SQS, Pricing and EKS
// endpoints must carry a SigV4 signature made with a known access key
// (verified with aws-sdk-go-v2's own signer), and every action it performs
// on every resource it touches or creates is evaluated (package policy)
// against the policies of the key's principal before the endpoint serves
// it.
//
// A Guard holds the identities (Identity: access key, principal ARN,
// policies). Endpoints call Authenticate, then Authorize with the checks
// (Check: action, resource ARN, condition keys) of the call (Caller and
// AuthorizeCaller, or Admit for both: endpoint.go), and answer a *Failure
// in their own service's error shape (Refuse: EC2 AuthFailure /
// UnauthorizedOperation, IAM InvalidClientTokenId / AccessDenied, ...).
// A denial's "Encoded authorization failure message" is base64 of a JSON
// document shaped like what sts:DecodeAuthorizationMessage returns
// (allowed, explicitDeny, matchedStatements, context: principal, action,
// resource, conditions); it is our own encoding, not encrypted: decode it
// with `base64 -d`.
//
// With recording on (SetRecording), every authorized call is kept with
// its checks and decisions: the least-privilege tests replay them against
// the policy minus one statement.
package awsauth
