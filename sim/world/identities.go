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
// every local AWS endpoint authenticates and authorizes with, and that
// policy.
func newGuard(o Options) (*awsauth.Guard, *policy.Policy, error) {
	doc, name := o.IAMPolicy, o.IAMPolicyName
	if doc == nil {
		doc, name = deploy.IAMPolicyJSON(), "deploy/iam-policy.json"
	}
	rendered, err := deploy.RenderIAMPolicy(doc, policyVars(o.Region, o.ClusterName))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	p, err := policy.Parse(name, rendered)
	if err != nil {
		return nil, nil, err
	}
	partition := awsauth.Partition(o.Region)
	worker := awsauth.Identity{Name: "worker", Account: AccountID, AccessKeyID: WorkerAccessKeyID, SecretAccessKey: WorkerSecretAccessKey,
		ARN:      "arn:" + partition + ":sts::" + AccountID + ":assumed-role/" + workerRole + "/joinery",
		RoleARN:  "arn:" + partition + ":iam::" + AccountID + ":role/" + workerRole,
		Policies: []*policy.Policy{p}}
	admin := awsauth.Identity{Name: "admin", Account: AccountID, AccessKeyID: AdminAccessKeyID, SecretAccessKey: AdminSecretAccessKey,
		ARN: "arn:" + partition + ":iam::" + AccountID + ":user/joinery-local-admin", Policies: []*policy.Policy{policy.AllowAll("admin")}}
	return awsauth.NewGuard(worker, admin), p, nil
}

// policyVars are the values the world fills the policy's placeholders with.
func policyVars(region, cluster string) deploy.IAMPolicyVars {
	return deploy.IAMPolicyVars{Partition: awsauth.Partition(region), Region: region, AccountID: AccountID, ClusterName: cluster,
		NodeRoleName: iam.DefaultRole, InterruptionQueueName: InterruptionQueueName}
}

// PolicyVars are the values the world filled the worker policy's
// placeholders with.
func (w *World) PolicyVars() deploy.IAMPolicyVars { return policyVars(w.Region, w.ClusterName) }

// WorkerPolicy is the worker's IAM policy as the world evaluates it
// (rendered).
func (w *World) WorkerPolicy() *policy.Policy { return w.workerPolicy }

// Elsewhere maps this world's own values (cluster name, region, account,
// node role, interruption queue) to another cluster's: a least-privilege
// test rewrites a recorded request with it and expects a refusal.
func (w *World) Elsewhere() map[string]string {
	return map[string]string{w.ClusterName: "other-cluster", w.Region: "eu-north-1", AccountID: "210987654321",
		iam.DefaultRole: "OtherNodeRole", InterruptionQueueName: "other-queue"}
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
