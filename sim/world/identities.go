package world

import (
	"fmt"
	"os"

	"github.com/joinery/joinery/deploy"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/awsauth/policy"
	"github.com/joinery/joinery/sim/iam"
)

// The local world's two AWS identities. Their keys are fixed and public:
// they guard nothing but loopback endpoints, and let tools reach a
// running `starter dev`. The worker's policy is deploy/iam-policy.json
// (Options.IAMPolicy); the admin (the tests, the simulator, the
// harness's own calls) may do anything.
const (
	AccountID = "123456789012"

	WorkerAccessKeyID     = "AKIAJOINERYWORKER001"
	WorkerSecretAccessKey = "joinery-local-worker-secret-not-a-secret"
	AdminAccessKeyID      = "AKIAJOINERYADMIN0001"
	AdminSecretAccessKey  = "joinery-local-admin-secret-not-a-secret"

	workerRole = "joinery-worker"
)

// newGuard renders the worker's policy for the world (partition, region,
// account, cluster, node role, interruption queue) and returns the guard
// every local AWS endpoint authenticates and authorizes with.
func newGuard(o Options) (*awsauth.Guard, error) {
	doc, name := o.IAMPolicy, o.IAMPolicyName
	if doc == nil {
		doc, name = deploy.IAMPolicyJSON(), "deploy/iam-policy.json"
	}
	rendered, err := deploy.RenderIAMPolicy(doc, deploy.IAMPolicyVars{Partition: awsauth.Partition(o.Region), Region: o.Region,
		AccountID: AccountID, ClusterName: o.ClusterName, NodeRoleName: iam.DefaultRole, InterruptionQueueName: InterruptionQueueName})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p, err := policy.Parse(name, rendered)
	if err != nil {
		return nil, err
	}
	partition := awsauth.Partition(o.Region)
	worker := awsauth.Identity{Name: "worker", Account: AccountID, AccessKeyID: WorkerAccessKeyID, SecretAccessKey: WorkerSecretAccessKey,
		ARN:      "arn:" + partition + ":sts::" + AccountID + ":assumed-role/" + workerRole + "/joinery",
		RoleARN:  "arn:" + partition + ":iam::" + AccountID + ":role/" + workerRole,
		Policies: []*policy.Policy{p}}
	admin := awsauth.Identity{Name: "admin", Account: AccountID, AccessKeyID: AdminAccessKeyID, SecretAccessKey: AdminSecretAccessKey,
		ARN: "arn:" + partition + ":iam::" + AccountID + ":user/joinery-local-admin", Policies: []*policy.Policy{policy.AllowAll("admin")}}
	return awsauth.NewGuard(worker, admin), nil
}

// ReadIAMPolicy reads a policy file for Options.IAMPolicy (starter dev
// --iam-policy): deploy/iam-policy.json's format, its placeholders filled
// by the world.
func ReadIAMPolicy(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("IAM policy: %w", err)
	}
	return b, nil
}

// WorkerKey is the worker's access key: its calls are evaluated against
// the worker's policy.
func (w *World) WorkerKey() aws.StaticKey {
	return aws.StaticKey{AccessKeyID: WorkerAccessKeyID, SecretAccessKey: WorkerSecretAccessKey}
}

// AdminKey is the admin's access key, for the calls tests and tools make
// of their own (allowed everything).
func (w *World) AdminKey() aws.StaticKey {
	return aws.StaticKey{AccessKeyID: AdminAccessKeyID, SecretAccessKey: AdminSecretAccessKey}
}

// WorkerKeyEnv is the worker's key as a pod gets it: AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY.
func (w *World) WorkerKeyEnv() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + WorkerAccessKeyID, "AWS_SECRET_ACCESS_KEY=" + WorkerSecretAccessKey}
}
