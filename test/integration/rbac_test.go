//go:build integration

package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/joinery/joinery/api/provreq"
	"github.com/joinery/joinery/api/saga"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/controller"
	"github.com/joinery/joinery/policy/gang"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/aws/interruption"
	"github.com/joinery/joinery/sim/world"
	"github.com/joinery/joinery/workflows"
	"go.temporal.io/sdk/client"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// rbacFile is the chart's RBAC as Helm renders it; deploy/chart/test
	// (TestRBACGoldenFile) keeps it equal to the chart.
	rbacFile      = "../../deploy/rbac.yaml"
	rbacNamespace = "joinery-system" // the release namespace rbac.yaml was rendered for
	rbacCluster   = "joinery-it"     // the worker's --cluster-name (joinery.sh/cluster tag)
)

// TestLeastPrivilegeRBACAndIAM runs the worker as the chart's ServiceAccount
// (a TokenRequest token, bound only to the chart's ClusterRole and Role from
// deploy/rbac.yaml) through a provision, a drain-and-replace, an
// interruption and a consolidation, recording every request it makes to the
// API server and to the EC2 and SQS endpoints. Then:
//
//   - RBAC: no request was refused; every verb x resource the roles grant
//     was used by some request (else it is an unused permission); and for
//     each one, an identity bound to the roles minus exactly that grant gets
//     403 Forbidden replaying a recorded request that needed it, while the
//     worker's identity is not refused the same replay.
//   - IAM: the worker signs with its own key and holds only
//     deploy/iam-policy.json; every local AWS call it made was evaluated
//     against that policy, resource by resource, and none was refused; for
//     each statement, the policy without it refuses some recorded call
//     (no statement unused), and each of its scopings refuses the call
//     rewritten for another cluster (checkWorkerIAM, iam_test.go).
func TestLeastPrivilegeRBACAndIAM(t *testing.T) {
	parallel(t)
	e := startEnvWith(t, false)
	admin := e.w.Kube.RESTConfig()
	roles := applyChartRBAC(t, e)
	saCfg := e.tokenConfig(t, roles.sa.Namespace, roles.sa.Name)
	checkIdentity(t, e, saCfg, roles.sa)

	rec := &kubeRecorder{}
	workerCfg := rest.CopyConfig(saCfg)
	workerCfg.Wrap(rec.wrap)
	e.w.Auth.SetRecording(true)
	e.runControllerLogged(t, func(c *controller.Config) {
		c.RESTConfig = workerCfg
		c.ClusterName, c.InterruptionQueue = rbacCluster, e.w.InterruptionQueueURL
		// As the chart runs it: leader election through the Role's Lease.
		c.LeaderElect, c.LeaseNamespace = true, rbacNamespace
		c.DisruptionPassInterval, c.DisruptionValidationDelay = 2*time.Second, 2*time.Second
		// Node repair on, so its EC2 status checks are among the calls.
		c.FeatureGates.NodeRepair, c.RepairInterval = true, 2*time.Second
		// The three app NodeClaims ask for the same offerings: one
		// CreateFleet launches them, then tags each with its NodeClaim.
		c.LaunchBatchIdle = 2 * time.Second
	})
	start := time.Now()
	driveLeastPrivilegeRun(t, e)
	t.Logf("provision, drain-and-replace, interruption and consolidation done in %s as %s",
		time.Since(start).Round(time.Second), serviceAccountUser(roles.sa))

	calls := rec.snapshot()
	testOwnAWSCalls(t, e)
	checkWorkerIAM(t, e)
	if !checkKubeCalls(t, calls, roles) {
		return // the replays assume every grant was used
	}
	replayNegativeCases(t, e, admin, saCfg, calls, roles)
}

// testOwnAWSCalls makes AWS calls from the test itself, with the admin's
// key, among them operations the worker's policy does not grant:
// checkWorkerIAM must not count them.
func testOwnAWSCalls(t *testing.T, e *env) {
	t.Helper()
	cc, err := aws.New(e.ctx, aws.Options{Endpoint: e.w.EC2Endpoint, ClusterName: rbacCluster, Key: e.w.AdminKey()})
	if err != nil {
		t.Fatal(err)
	}
	ins, err := cc.List(e.ctx) // DescribeInstances
	if err != nil {
		t.Fatal(err)
	}
	sgs, err := cc.SecurityGroups(e.ctx, []apiv1.SelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "production-eks"}}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := aws.NewQueue(e.ctx, aws.QueueOptions{URL: e.w.InterruptionQueueURL, Endpoint: e.w.SQSEndpoint, Key: e.w.AdminKey()})
	if err != nil {
		t.Fatal(err)
	}
	// A rebalance recommendation for an instance Joinery does not know: a
	// no-op for the worker.
	body, err := interruption.Build(interruption.Spec{Kind: interruption.KindRebalanceRecommendation,
		EventID: "rbac-test", InstanceID: "i-0000000000000000a", Time: time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(e.ctx, string(body)); err != nil { // SendMessage
		t.Fatal(err)
	}
	t.Logf("the test's own calls: %d cluster instances, %d security groups, one message sent", len(ins), len(sgs))
}

// chartRBAC is deploy/rbac.yaml, typed.
type chartRBAC struct {
	sa          corev1.ServiceAccount
	clusterRole rbacv1.ClusterRole
	role        rbacv1.Role
}

// applyChartRBAC creates the release namespace and applies deploy/rbac.yaml
// as it is (server-side apply, the admin identity).
func applyChartRBAC(t *testing.T, e *env) chartRBAC {
	t.Helper()
	objs := readManifests(t, rbacFile)
	var out chartRBAC
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		var into any
		switch o.GetKind() {
		case "ServiceAccount":
			into = &out.sa
		case "ClusterRole":
			into = &out.clusterRole
		case "Role":
			into = &out.role
		case "ClusterRoleBinding", "RoleBinding":
		default:
			t.Fatalf("%s: unexpected %s %s", rbacFile, o.GetKind(), o.GetName())
		}
		if into != nil {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true); err != nil {
				t.Fatalf("%s: %s: %v", rbacFile, o.GetKind(), err)
			}
		}
	}
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		if kinds[k] != 1 {
			t.Fatalf("%s holds %d %s objects, want 1 (regenerate it from the chart)", rbacFile, kinds[k], k)
		}
	}
	if out.sa.Namespace != rbacNamespace || out.role.Namespace != rbacNamespace {
		t.Fatalf("%s is rendered for namespace %q, the test expects %q", rbacFile, out.sa.Namespace, rbacNamespace)
	}
	if _, err := e.kc.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rbacNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	e.apply(t, objs)
	return out
}

// tokenConfig is a rest.Config that authenticates as the ServiceAccount
// with a token from the TokenRequest API, and with nothing else (no client
// certificate): only the CA of the admin config is kept.
func (e *env) tokenConfig(t *testing.T, ns, name string) *rest.Config {
	t.Helper()
	exp := int64(3600)
	tr, err := e.kc.CoreV1().ServiceAccounts(ns).CreateToken(e.ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, name, err)
	}
	cfg := rest.AnonymousClientConfig(e.w.Kube.RESTConfig())
	cfg.BearerToken = tr.Status.Token
	cfg.QPS, cfg.Burst = 200, 400
	return cfg
}

func serviceAccountUser(sa corev1.ServiceAccount) string {
	return "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
}

// checkIdentity: the API server sees the token as the ServiceAccount (not
// the admin), and that identity is refused what the roles do not grant.
// It also waits until the bindings reach the authorizer.
func checkIdentity(t *testing.T, e *env, cfg *rest.Config, sa corev1.ServiceAccount) {
	t.Helper()
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := kc.AuthenticationV1().SelfSubjectReviews().Create(e.ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Status.UserInfo.Username; got != serviceAccountUser(sa) {
		t.Fatalf("the worker's token authenticates as %q, want %q", got, serviceAccountUser(sa))
	}
	waitAllowed(t, e, serviceAccountUser(sa), sa.Namespace, authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods"})
	if _, err := kc.CoreV1().Secrets("default").List(e.ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the worker's identity lists secrets (%v): it is not least-privilege", err)
	}
}

// waitAllowed waits until the authorizer allows user attrs (new bindings
// reach RBAC's informer cache after a moment).
func waitAllowed(t *testing.T, e *env, user, saNamespace string, attrs authorizationv1.ResourceAttributes) {
	t.Helper()
	waitFor(t, 30*time.Second, user+" authorized to "+attrs.Verb+" "+attrs.Resource, func() bool {
		ok, err := e.allowed(user, saNamespace, attrs)
		return err == nil && ok
	})
}

func (e *env) allowed(user, saNamespace string, attrs authorizationv1.ResourceAttributes) (bool, error) {
	sar, err := e.kc.AuthorizationV1().SubjectAccessReviews().Create(e.ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
			ResourceAttributes: &attrs,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// driveLeastPrivilegeRun: provision three nodes (and a pod nothing can
// hold), drain-and-replace one, reclaim another without warning
// (interruption), then scale down and let consolidation remove the rest.
func driveLeastPrivilegeRun(t *testing.T, e *env) {
	t.Helper()
	objs := readManifests(t, "testdata/rbac-iam.yaml")
	e.apply(t, objs)
	const pool = "least-privilege"
	appPods := func() []corev1.Pod {
		pods, err := e.kc.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=least-privilege"})
		if err != nil {
			return nil
		}
		var out []corev1.Pod
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) {
				out = append(out, p)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Spec.NodeName < out[j].Spec.NodeName })
		return out
	}
	poolNodes := func() int {
		nodes, err := e.kc.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{LabelSelector: apiv1.LabelNodePool + "=" + pool})
		if err != nil {
			return -1
		}
		return len(nodes.Items)
	}
	hugeEvent := func() int32 {
		evs, err := e.kc.CoreV1().Events("default").List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return 0
		}
		for _, ev := range evs.Items {
			if ev.Source.Component == "joinery" && ev.InvolvedObject.Name == "huge" && ev.Reason == "FailedScheduling" {
				return ev.Count
			}
		}
		return 0
	}

	// 1. Provision.
	waitFor(t, 3*time.Minute, "3 app pods Running", func() bool { return len(appPods()) == 3 })
	waitFor(t, time.Minute, "FailedScheduling Event for the huge pod", func() bool { return hugeEvent() > 0 })
	waitFor(t, time.Minute, "the gang's try reported on its ProvisioningRequest", func() bool {
		u, err := dynamic.NewForConfigOrDie(e.w.Kube.RESTConfig()).Resource(provreq.ProvisioningRequestGVR).Namespace("default").
			Get(e.ctx, "least-privilege-gang", metav1.GetOptions{})
		if err != nil {
			return false
		}
		pr := &provreq.ProvisioningRequest{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pr) != nil {
			return false
		}
		c := pr.Condition(provreq.Provisioned)
		return c != nil && c.Reason == gang.ReasonCapacityNotFound
	})
	t.Logf("provisioned: %d nodes in NodePool %s", poolNodes(), pool)

	// 2. Drain-and-replace, as `starter drain` starts it.
	target := appPods()[0].Spec.NodeName
	id := workflows.DisruptWorkflowID(saga.ReasonManual, target)
	run, err := e.tc.ExecuteWorkflow(e.ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue},
		workflows.DrainAndReplaceWorkflow, workflows.DisruptInput{NodeName: target, Reason: saga.ReasonManual, Replace: true, SkipBudgets: true})
	if err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(e.ctx, 3*time.Minute)
	defer cancel()
	var res workflows.DisruptResult
	if err := run.Get(dctx, &res); err != nil {
		t.Fatalf("drain-and-replace of %s: %v", target, err)
	}
	if res.Outcome != workflows.PhaseDone || len(res.Replacements) == 0 || res.Evicted == 0 {
		t.Fatalf("drain-and-replace of %s: %+v", target, res)
	}
	waitFor(t, 2*time.Minute, "3 app pods Running after the drain", func() bool { return len(appPods()) == 3 })
	t.Logf("drained and replaced %s: %+v", target, res)

	// 3. Interruption: an instance reclaimed without notice (state change
	// to shutting-down through the SQS queue): its pods are deleted at once.
	var victim string
	for _, p := range appPods() {
		if p.Spec.NodeName != target {
			victim = p.Spec.NodeName
			break
		}
	}
	sim, err := e.w.SimulateInterruption(e.ctx, world.SimulateRequest{Node: victim, Kind: world.SimTerminated})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the reclaimed node cleaned up", func() bool {
		_, err := e.kc.CoreV1().Nodes().Get(e.ctx, victim, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	waitFor(t, 2*time.Minute, "3 app pods Running after the reclaim", func() bool { return len(appPods()) == 3 })
	t.Logf("instance %s of %s reclaimed; node cleaned up, pods running again", sim.InstanceID, victim)

	// 4. Consolidation: scale down and let the NodePool consolidate.
	before := poolNodes()
	if _, err := e.kc.AppsV1().Deployments("default").Patch(e.ctx, "app", types.MergePatchType,
		[]byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(e.w.Kube.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(apiv1.NodePoolGVR).Patch(e.ctx, pool, types.MergePatchType,
		[]byte(`{"spec":{"disruption":{"consolidateAfter":"5s"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "consolidation down to one node", func() bool { return poolNodes() == 1 && len(appPods()) == 1 })
	// The decision is recorded once its drains have finished, which can be
	// a moment after the last node is gone.
	var st workflows.ConsolidationStatus
	waitFor(t, time.Minute, "the consolidation decision in the workflow's status", func() bool {
		v, err := e.tc.QueryWorkflow(e.ctx, workflows.ConsolidationWorkflowID, "", workflows.QueryStatus)
		if err != nil {
			return false
		}
		return v.Get(&st) == nil && len(st.History) > 0
	})
	for _, r := range st.History {
		t.Logf("consolidation: %s %v at %.4f USD/h -> %s", r.Decision.Method, r.Decision.Nodes, r.Decision.USDPerHour, r.Outcome)
	}
	// The huge pod was planned again (new batches, and the NodePool change
	// makes pods no NodePool could hold eligible again): the recorder
	// patches its repeated FailedScheduling Event. Not fatal here: without
	// the permission the refused PATCH is what the checks report.
	for deadline := time.Now().Add(30 * time.Second); hugeEvent() < 2 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("consolidated %d -> %d nodes; FailedScheduling count for the huge pod: %d", before, poolNodes(), hugeEvent())

	// 5. Deleting the NodePool ends its node through the finalizer, and
	// deleting the EC2NodeClass then removes its instance profile and
	// launch templates.
	if err := dc.Resource(apiv1.NodePoolGVR).Delete(e.ctx, pool, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "the NodePool's nodes gone", func() bool { return poolNodes() == 0 })
	if err := dc.Resource(apiv1.EC2NodeClassGVR).Delete(e.ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the EC2NodeClass finalized", func() bool {
		_, err := dc.Resource(apiv1.EC2NodeClassGVR).Get(e.ctx, "default", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if n := len(e.w.IAM.InstanceProfiles()); n != 0 {
		t.Errorf("%d instance profiles left after the EC2NodeClass was deleted", n)
	}
	if n := len(e.w.EC2.LaunchTemplates()); n != 0 {
		t.Errorf("%d launch templates left after the EC2NodeClass was deleted", n)
	}
	t.Logf("NodePool and EC2NodeClass deleted: node terminated, instance profile and launch templates removed")
	// The Lease is renewed every 2 s (update); give the recorder one more.
	time.Sleep(3 * time.Second)
}

// kubeCall is one request the worker made to the API server.
type kubeCall struct {
	method, path, query string
	status              int
}

// kubeRecorder wraps the worker's rest.Config transport. It also plays an
// API server without streaming lists (the WatchList feature, off by
// default on servers the chart supports, kubeVersion >= 1.29): the first
// watch with sendInitialEvents=true of each resource is refused as such a
// server refuses it, so the informer falls back to LIST + WATCH and the
// test sees (and authorizes for real) the LIST the worker needs there.
type kubeRecorder struct {
	mu            sync.Mutex
	calls         []kubeCall
	noWatchListOn map[string]bool // paths whose streaming list was refused
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (k *kubeRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("sendInitialEvents") == "true" && k.refuseWatchList(r.URL.Path) {
			body := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"Invalid","code":422,` +
				`"message":"ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}`
			return &http.Response{StatusCode: http.StatusUnprocessableEntity, Status: "422 Unprocessable Entity", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)),
				ContentLength: int64(len(body)), Request: r}, nil
		}
		resp, err := rt.RoundTrip(r)
		c := kubeCall{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery}
		if resp != nil {
			c.status = resp.StatusCode
		}
		k.mu.Lock()
		k.calls = append(k.calls, c)
		k.mu.Unlock()
		return resp, err
	})
}

func (k *kubeRecorder) refuseWatchList(path string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.noWatchListOn == nil {
		k.noWatchListOn = map[string]bool{}
	}
	if k.noWatchListOn[path] {
		return false
	}
	k.noWatchListOn[path] = true
	return true
}

func (k *kubeRecorder) snapshot() []kubeCall {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]kubeCall(nil), k.calls...)
}

// grant is one verb on one resource[/subresource] of an API group, as
// an RBAC rule grants it and as an API request needs it.
type grant struct{ verb, group, resource string }

func (g grant) String() string {
	grp := g.group
	if grp == "" {
		grp = "core"
	}
	return g.verb + " " + grp + "/" + g.resource
}

func (g grant) attributes(ns string) authorizationv1.ResourceAttributes {
	res, sub, _ := strings.Cut(g.resource, "/")
	return authorizationv1.ResourceAttributes{Namespace: ns, Verb: g.verb, Group: g.group, Resource: res, Subresource: sub}
}

// parseKubeCall maps a request to what RBAC checks (as the API server's
// RequestInfoFactory does): ok is false for non-resource URLs (discovery).
func parseKubeCall(c kubeCall) (g grant, namespace string, ok bool) {
	parts := strings.Split(strings.Trim(c.path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		g.group, rest = parts[1], parts[3:]
	default:
		return g, "", false
	}
	if len(rest) == 0 {
		return g, "", false
	}
	if rest[0] == "namespaces" && len(rest) >= 3 {
		namespace, rest = rest[1], rest[2:]
	}
	g.resource = rest[0]
	name := ""
	if len(rest) > 1 {
		name = rest[1]
	}
	if len(rest) > 2 {
		g.resource += "/" + rest[2]
	}
	q, _ := url.ParseQuery(c.query)
	switch c.method {
	case http.MethodGet, http.MethodHead:
		switch {
		case name != "":
			g.verb = "get"
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			g.verb = "watch"
		default:
			g.verb = "list"
		}
	case http.MethodPost:
		g.verb = "create"
	case http.MethodPut:
		g.verb = "update"
	case http.MethodPatch:
		g.verb = "patch"
	case http.MethodDelete:
		g.verb = "delete"
		if name == "" {
			g.verb = "deletecollection"
		}
	default:
		return g, "", false
	}
	return g, namespace, true
}

// grants expands rules into single grants (no wildcards expected).
func grants(t *testing.T, kind string, rules []rbacv1.PolicyRule) []grant {
	t.Helper()
	var out []grant
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("%s rule %+v: resourceNames/nonResourceURLs are not handled here", kind, r)
		}
		for _, grp := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if grp == "*" || res == "*" || v == "*" {
						t.Errorf("%s rule %+v: wildcard", kind, r)
					}
					out = append(out, grant{v, grp, res})
				}
			}
		}
	}
	return out
}

// without returns rules minus exactly grant g (one rule per group x
// resource, so dropping a verb leaves every other grant in place).
func without(rules []rbacv1.PolicyRule, g grant) []rbacv1.PolicyRule {
	out := []rbacv1.PolicyRule{}
	for _, r := range rules {
		for _, grp := range r.APIGroups {
			for _, res := range r.Resources {
				var verbs []string
				for _, v := range r.Verbs {
					if (grant{v, grp, res}) != g {
						verbs = append(verbs, v)
					}
				}
				if len(verbs) > 0 {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{grp}, Resources: []string{res}, Verbs: verbs})
				}
			}
		}
	}
	return out
}

// roleGrant is a grant of the ClusterRole (namespace "") or of the Role
// (its namespace).
type roleGrant struct {
	grant
	namespace string
}

func (r roleGrant) String() string {
	if r.namespace == "" {
		return "ClusterRole: " + r.grant.String()
	}
	return "Role (" + r.namespace + "): " + r.grant.String()
}

func (r roleGrant) covers(g grant, ns string) bool {
	return r.grant == g && (r.namespace == "" || r.namespace == ns)
}

func allGrants(t *testing.T, roles chartRBAC) []roleGrant {
	var out []roleGrant
	for _, g := range grants(t, "ClusterRole", roles.clusterRole.Rules) {
		out = append(out, roleGrant{g, ""})
	}
	for _, g := range grants(t, "Role", roles.role.Rules) {
		out = append(out, roleGrant{g, roles.role.Namespace})
	}
	return out
}

// checkKubeCalls: the worker was never refused, made no request the roles
// do not grant, and used every grant (an unused one is to be removed from
// the chart). It reports whether all of that holds.
// racedGrants are the grants a run may leave unused, with why: the worker
// needs them only when it wins a race with the kube-scheduler.
// racedCalls is the request the worker makes with each (SchedulerHints,
// providers/kube NominatePod), replayed when the run made none.
var (
	racedGrants = map[string]string{
		"ClusterRole: patch core/pods/status": "a pending pod is pointed at its node only if the kube-scheduler has not bound it first",
	}
	racedCalls = map[string]kubeCall{
		"ClusterRole: patch core/pods/status": {method: "PATCH", path: "/api/v1/namespaces/default/pods/app/status", status: 200},
	}
)

func checkKubeCalls(t *testing.T, calls []kubeCall, roles chartRBAC) bool {
	t.Helper()
	ok := true
	all := allGrants(t, roles)
	used := map[roleGrant]int{}
	nonResource := map[string]int{}
	for _, c := range calls {
		if !authorized(c.status) && c.status != 0 {
			t.Errorf("the worker was refused (%d): %s %s?%s", c.status, c.method, c.path, c.query)
			ok = false
		}
		g, ns, isResource := parseKubeCall(c)
		if !isResource {
			nonResource[c.method+" "+c.path]++
			continue
		}
		granted := false
		for _, rg := range all {
			if rg.covers(g, ns) {
				used[rg]++
				granted = true
			}
		}
		if !granted {
			t.Errorf("the worker made %s (%s %s) which the roles do not grant", g, c.method, c.path)
			ok = false
		}
	}
	t.Logf("%d API requests by the worker; non-resource: %v", len(calls), nonResource)
	for _, rg := range all {
		if why, raced := racedGrants[rg.String()]; raced && used[rg] == 0 {
			t.Logf("not used in this run: %s (%s); its replay below is a request the worker makes", rg, why)
			continue
		}
		if used[rg] == 0 {
			t.Errorf("unused permission: %s (no request of the worker needed it; remove it from deploy/chart/joinery)", rg)
			ok = false
		} else {
			t.Logf("used %4d x %s", used[rg], rg)
		}
	}
	return ok
}

// replayNegativeCases: for every grant, an identity bound to the roles
// minus that grant is refused (403) a recorded request that needed it;
// the worker's identity is not. Mutating requests are replayed with
// dryRun=All and an empty body: authorization comes before both.
func replayNegativeCases(t *testing.T, e *env, admin, workerCfg *rest.Config, calls []kubeCall, roles chartRBAC) {
	t.Helper()
	all := allGrants(t, roles)
	type negCase struct {
		drop roleGrant
		call kubeCall
		ns   string // the call's namespace
		sa   string
	}
	var cases []negCase
	for i, rg := range all {
		found := false
		for _, c := range calls {
			if g, ns, ok := parseKubeCall(c); ok && rg.covers(g, ns) && authorized(c.status) {
				cases = append(cases, negCase{drop: rg, call: c, ns: ns, sa: fmt.Sprintf("minus-%02d", i)})
				found = true
				break
			}
		}
		if c, raced := racedCalls[rg.String()]; raced && !found {
			cases = append(cases, negCase{drop: rg, call: c, ns: "default", sa: fmt.Sprintf("minus-%02d", i)})
		}
	}
	if len(cases) != len(all) {
		t.Fatalf("%d grants but only %d have an authorized recorded request to replay", len(all), len(cases))
	}
	// One ServiceAccount, ClusterRole and Role per case, all created first.
	for _, nc := range cases {
		crRules, roleRules := roles.clusterRole.Rules, roles.role.Rules
		if nc.drop.namespace == "" {
			crRules = without(crRules, nc.drop.grant)
		} else {
			roleRules = without(roleRules, nc.drop.grant)
		}
		createIdentity(t, e, nc.sa, crRules, roleRules)
	}
	hcWorker, err := rest.HTTPClientFor(workerCfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, nc := range cases {
		user := "system:serviceaccount:" + rbacNamespace + ":" + nc.sa
		// Wait until its bindings are in effect: another grant is allowed,
		// and the dropped one is not.
		for _, other := range all {
			if other != nc.drop {
				waitAllowed(t, e, user, rbacNamespace, other.attributes(other.namespace))
				break
			}
		}
		if ok, err := e.allowed(user, rbacNamespace, nc.drop.attributes(nc.ns)); err != nil || ok {
			t.Errorf("%s: SubjectAccessReview allows the dropped %s (%v)", nc.sa, nc.drop, err)
		}
		hc, err := rest.HTTPClientFor(e.tokenConfig(t, rbacNamespace, nc.sa))
		if err != nil {
			t.Fatal(err)
		}
		got, body := replay(t, e.ctx, hc, admin.Host, nc.call)
		ok, _ := replay(t, e.ctx, hcWorker, admin.Host, nc.call)
		switch {
		case got != http.StatusForbidden:
			t.Errorf("without %s, replaying %s %s got %d, want 403 Forbidden: %s", nc.drop, nc.call.method, nc.call.path, got, body)
		case ok == http.StatusForbidden || ok == http.StatusUnauthorized:
			t.Errorf("the worker's identity is refused its own recorded %s %s (%d)", nc.call.method, nc.call.path, ok)
		default:
			what := nc.call.path
			if q, _ := url.ParseQuery(nc.call.query); q.Get("watch") != "" {
				what += "?watch=" + q.Get("watch")
			}
			t.Logf("without %-55s %-6s %-75s -> %d (worker: %d)", nc.drop.String(), nc.call.method, what, got, ok)
		}
	}
}

// authorized: the API server let the request past authorization (a 404
// for the Lease the first leader election looks up is authorized too).
func authorized(status int) bool {
	return status != 0 && status != http.StatusUnauthorized && status != http.StatusForbidden
}

// createIdentity creates a ServiceAccount in rbacNamespace bound to a
// ClusterRole and a Role with the given rules.
func createIdentity(t *testing.T, e *env, name string, clusterRules, roleRules []rbacv1.PolicyRule) {
	t.Helper()
	ctx, rb := e.ctx, e.kc.RbacV1()
	subj := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: rbacNamespace}}
	meta := metav1.ObjectMeta{Name: "joinery-" + name}
	nsMeta := metav1.ObjectMeta{Name: "joinery-" + name, Namespace: rbacNamespace}
	var errs []error
	_, err := e.kc.CoreV1().ServiceAccounts(rbacNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rbacNamespace}}, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = rb.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: clusterRules}, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = rb.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subj,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: meta.Name}}, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = rb.Roles(rbacNamespace).Create(ctx, &rbacv1.Role{ObjectMeta: nsMeta, Rules: roleRules}, metav1.CreateOptions{})
	errs = append(errs, err)
	_, err = rb.RoleBindings(rbacNamespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: nsMeta, Subjects: subj,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: nsMeta.Name}}, metav1.CreateOptions{})
	errs = append(errs, err)
	for _, err := range errs {
		if err != nil {
			t.Fatalf("identity %s: %v", name, err)
		}
	}
}

// replay sends c again with hc, with an empty body (and dryRun=All when it
// mutates), and returns the status and the start of the response body.
func replay(t *testing.T, ctx context.Context, hc *http.Client, host string, c kubeCall) (int, string) {
	t.Helper()
	q, _ := url.ParseQuery(c.query)
	ct := ""
	switch c.method {
	case http.MethodPost, http.MethodPut:
		q.Set("dryRun", "All")
		ct = "application/json"
	case http.MethodPatch:
		q.Set("dryRun", "All")
		ct = "application/merge-patch+json"
	case http.MethodDelete:
		q.Set("dryRun", "All")
	}
	if q.Get("watch") != "" {
		q.Set("timeoutSeconds", "1")
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, c.method, strings.TrimSuffix(host, "/")+c.path+"?"+q.Encode(), http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("replay %s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 300)
	n, _ := resp.Body.Read(buf)
	return resp.StatusCode, strings.TrimSpace(string(buf[:n]))
}
