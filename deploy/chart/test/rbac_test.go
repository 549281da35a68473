package charttest

import (
	"bufio"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// access is one (verb, API group, resource[/subresource]) the worker uses.
type access struct{ verb, group, resource string }

func (a access) String() string {
	g := a.group
	if g == "" {
		g = "core"
	}
	return a.verb + " " + g + "/" + a.resource
}

// needed is what the worker (go list -deps ./worker: providers/kube/, activities/,
// controller/ ...) calls on the Kubernetes API, one row per call site kind.
// The ClusterRole must grant exactly these; TestRBACTableMatchesCode keeps
// the table equal to what the code calls.
var needed = map[access]string{
	{"list", "", "pods"}:                                             "providers/kube/cluster.go: pod informer (pending-pod watcher, snapshot, pods by node)",
	{"watch", "", "pods"}:                                            "providers/kube/cluster.go: pod informer",
	{"delete", "", "pods"}:                                           "providers/kube/writes.go: DeletePod (DrainStep) deletes a pod at the node's termination grace deadline",
	{"create", "", "pods/eviction"}:                                  "providers/kube/writes.go: EvictPod, PolicyV1().Evictions().Evict (PDB-aware drain)",
	{"patch", "", "pods/status"}:                                     "providers/kube/writes.go: NominatePod sets a pending pod's nominatedNodeName to the node launched for it",
	{"list", "", "nodes"}:                                            "providers/kube/cluster.go: node informer",
	{"watch", "", "nodes"}:                                           "providers/kube/cluster.go: node informer",
	{"get", "", "nodes"}:                                             "providers/kube/writes.go: GetNode; CheckDisruptionCandidate and TaintNodeDisrupted read the node from the API server",
	{"update", "", "nodes"}:                                          "providers/kube/writes.go: UpdateNode; TaintNodeDisrupted adds/removes karpenter.sh/disrupted (update, retried on conflict)",
	{"patch", "", "nodes"}:                                           "providers/kube/writes.go: LabelNode; registered/initialized labels, drop the unregistered taint",
	{"delete", "", "nodes"}:                                          "providers/kube/writes.go: RequestNodeDeletion; delete the Node once its instance is gone",
	{"create", "", "events"}:                                         "providers/kube/cluster.go: event recorder sink (EventSinkImpl.Create)",
	{"patch", "", "events"}:                                          "providers/kube/cluster.go: event recorder sink (EventSinkImpl.Patch, aggregated repeats)",
	{"list", "apps", "daemonsets"}:                                   "providers/kube/cluster.go: daemonset informer (daemonset overhead)",
	{"watch", "apps", "daemonsets"}:                                  "providers/kube/cluster.go: daemonset informer",
	{"list", "policy", "poddisruptionbudgets"}:                       "providers/kube/cluster.go: PDB informer",
	{"watch", "policy", "poddisruptionbudgets"}:                      "providers/kube/cluster.go: PDB informer",
	{"list", "storage.k8s.io", "volumeattachments"}:                  "providers/kube/cluster.go: VolumeAttachment informer (a terminating node waits for its volumes)",
	{"watch", "storage.k8s.io", "volumeattachments"}:                 "providers/kube/cluster.go: VolumeAttachment informer",
	{"list", "", "persistentvolumeclaims"}:                           "providers/kube/cluster.go: PVC informer (a pod's volumes: zone, attach count)",
	{"watch", "", "persistentvolumeclaims"}:                          "providers/kube/cluster.go: PVC informer",
	{"list", "", "persistentvolumes"}:                                "providers/kube/cluster.go: PV informer (a bound volume's node affinity and driver)",
	{"watch", "", "persistentvolumes"}:                               "providers/kube/cluster.go: PV informer",
	{"list", "storage.k8s.io", "storageclasses"}:                     "providers/kube/cluster.go: StorageClass informer (allowedTopologies, provisioner of unbound claims)",
	{"watch", "storage.k8s.io", "storageclasses"}:                    "providers/kube/cluster.go: StorageClass informer",
	{"list", "storage.k8s.io", "csinodes"}:                           "providers/kube/cluster.go: CSINode informer (a node's volume attach limit)",
	{"watch", "storage.k8s.io", "csinodes"}:                          "providers/kube/cluster.go: CSINode informer",
	{"list", "node.k8s.io", "runtimeclasses"}:                        "providers/kube/cluster.go: RuntimeClass informer (a DaemonSet template's overhead)",
	{"watch", "node.k8s.io", "runtimeclasses"}:                       "providers/kube/cluster.go: RuntimeClass informer",
	{"list", "", "namespaces"}:                                       "providers/kube/cluster.go: Namespace informer (pod affinity namespaceSelectors)",
	{"watch", "", "namespaces"}:                                      "providers/kube/cluster.go: Namespace informer",
	{"list", "karpenter.sh", "nodepools"}:                            "providers/kube/cluster.go: dynamic NodePool informer",
	{"watch", "karpenter.sh", "nodepools"}:                           "providers/kube/cluster.go: dynamic NodePool informer",
	{"patch", "karpenter.sh", "nodepools"}:                           "providers/kube/karpenter.go: PatchNodePool (karpenter.sh/nodepool-hash and its version, as Karpenter writes them)",
	{"patch", "karpenter.sh", "nodepools/status"}:                    "providers/kube/karpenter.go: PatchNodePoolStatus (ValidationSucceeded, Ready conditions)",
	{"list", "karpenter.sh", "nodeclaims"}:                           "providers/kube/cluster.go: dynamic NodeClaim informer",
	{"watch", "karpenter.sh", "nodeclaims"}:                          "providers/kube/cluster.go: dynamic NodeClaim informer",
	{"get", "karpenter.sh", "nodeclaims"}:                            "providers/kube/karpenter.go: NodeClaim() reads one from the API server, not the cache",
	{"create", "karpenter.sh", "nodeclaims"}:                         "providers/kube/karpenter.go: the Provision plan's NodeClaims",
	{"patch", "karpenter.sh", "nodeclaims"}:                          "providers/kube/karpenter.go: PatchNodeClaim merge-patches metadata/spec (e.g. nominated pods)",
	{"delete", "karpenter.sh", "nodeclaims"}:                         "providers/kube/karpenter.go: DeleteNodeClaim after the instance is terminated",
	{"patch", "karpenter.sh", "nodeclaims/status"}:                   "providers/kube/karpenter.go: PatchNodeClaimStatus (providerID, nodeName, conditions)",
	{"list", "karpenter.sh", "nodeoverlays"}:                         "providers/kube/nodeoverlay.go: NodeOverlay informer (NodeOverlay gate), else one list (CountNodeOverlays)",
	{"list", "karpenter.k8s.aws", "ec2nodeclasses"}:                  "providers/kube/cluster.go: dynamic EC2NodeClass informer",
	{"watch", "karpenter.k8s.aws", "ec2nodeclasses"}:                 "providers/kube/cluster.go: dynamic EC2NodeClass informer",
	{"patch", "karpenter.k8s.aws", "ec2nodeclasses"}:                 "providers/kube/nodeclass.go: PatchNodeClass (termination finalizer)",
	{"patch", "karpenter.k8s.aws", "ec2nodeclasses/status"}:          "providers/kube/nodeclass.go: PatchNodeClassStatus (resolved subnets, groups, images, profile, conditions)",
	{"list", "autoscaling.x-k8s.io", "provisioningrequests"}:         "providers/kube/provreq.go: dynamic ProvisioningRequest informer (when the CRD is served)",
	{"watch", "autoscaling.x-k8s.io", "provisioningrequests"}:        "providers/kube/provreq.go: dynamic ProvisioningRequest informer",
	{"patch", "autoscaling.x-k8s.io", "provisioningrequests/status"}: "providers/kube/provreq.go: PatchProvisioningRequestStatus (Accepted, Provisioned, BookingExpired, details)",
	{"get", "", "podtemplates"}:                                      "providers/kube/podtemplate.go: PodTemplate (a ProvisioningRequest's pod sets, a CapacityBuffer's podTemplateRef)",
	{"list", "autoscaling.x-k8s.io", "capacitybuffers"}:              "providers/kube/capacitybuffer.go: CapacityBuffer informer (CapacityBuffer gate), else one list (CountCapacityBuffers)",
}

// neededWithSchedulerConfig is what the worker calls only when given
// --scheduler-config (the chart's schedulerConfig value): the ClusterRole
// grants these only then.
var neededWithSchedulerConfig = map[access]string{
	{"list", "", "services"}:                "providers/kube/cluster.go: Service informer (WatchSpreadSelectors: default spread selectors)",
	{"watch", "", "services"}:               "providers/kube/cluster.go: Service informer",
	{"list", "", "replicationcontrollers"}:  "providers/kube/cluster.go: ReplicationController informer (WatchSpreadSelectors)",
	{"watch", "", "replicationcontrollers"}: "providers/kube/cluster.go: ReplicationController informer",
	{"list", "apps", "replicasets"}:         "providers/kube/cluster.go: ReplicaSet informer (WatchSpreadSelectors)",
	{"watch", "apps", "replicasets"}:        "providers/kube/cluster.go: ReplicaSet informer",
	{"list", "apps", "statefulsets"}:        "providers/kube/cluster.go: StatefulSet informer (WatchSpreadSelectors)",
	{"watch", "apps", "statefulsets"}:       "providers/kube/cluster.go: StatefulSet informer",
}

// neededWithNodeOverlay is what the worker calls only with
// --feature-gates NodeOverlay=true (the chart's featureGates value).
var neededWithNodeOverlay = map[access]string{
	{"watch", "karpenter.sh", "nodeoverlays"}:        "providers/kube/nodeoverlay.go: NodeOverlay informer (WatchNodeOverlays)",
	{"patch", "karpenter.sh", "nodeoverlays/status"}: "providers/kube/nodeoverlay.go: SetNodeOverlayConditions (ValidationSucceeded, Ready)",
}

// neededWithCapacityBuffer is what the worker calls only with
// --feature-gates CapacityBuffer=true.
var neededWithCapacityBuffer = map[access]string{
	{"watch", "autoscaling.x-k8s.io", "capacitybuffers"}:        "providers/kube/capacitybuffer.go: CapacityBuffer informer (WatchCapacityBuffers)",
	{"patch", "autoscaling.x-k8s.io", "capacitybuffers/status"}: "providers/kube/capacitybuffer.go: SetCapacityBufferStatus (replicas, ReadyForProvisioning, Provisioning)",
	{"get", "apps", "deployments"}:                              "providers/kube/capacitybuffer.go: Scalable (a buffer's scalableRef)",
	{"get", "apps", "replicasets"}:                              "providers/kube/capacitybuffer.go: Scalable (a buffer's scalableRef)",
	{"get", "apps", "statefulsets"}:                             "providers/kube/capacitybuffer.go: Scalable (a buffer's scalableRef)",
}

// neededInRole is what the worker calls in its own namespace: granted by
// the namespaced Role (with the leader-election Lease), not the ClusterRole.
var neededInRole = map[access]string{
	{"list", "", "configmaps"}:   "providers/kube/statestore.go: shared-state ConfigMap informer (ICE cache, pending-pod memo)",
	{"watch", "", "configmaps"}:  "providers/kube/statestore.go: shared-state ConfigMap informer",
	{"create", "", "configmaps"}: "providers/kube/statestore.go: the first write creates the ConfigMap",
	{"patch", "", "configmaps"}:  "providers/kube/statestore.go: merge patches add and prune entries",
}

// notWorker lists client calls in the worker's packages that the worker
// process never makes, by file and a substring of the line.
var notWorker = []struct{ file, line, why string }{
	{"providers/kube/apply.go", "", "kube.Apply: server-side apply of user manifests for `starter dev`; the worker never calls it (checked below)"},
	{"controller/leader.go", "CoordinationV1()", "the leader-election Lease: granted by the namespaced Role, checked by TestRBACLeaderElectionRole"},
	{"providers/kube/provreq.go", "Discovery().ServerResourcesForGroupVersion(", "discovery of autoscaling.x-k8s.io/v1 (is the ProvisioningRequest CRD served?): every authenticated user may read it (system:discovery); no rule"},
	{"controller/nodeclass.go", "Discovery().ServerVersion()", "GET /version (the cluster's Kubernetes version for the AMI alias): every authenticated user may read it (system:public-info-viewer); no rule"},
}

// TestRBACClusterRole: the rendered ClusterRole grants every row of needed
// and nothing else: no wildcards, no resourceNames, no non-resource URLs;
// with schedulerConfig set, neededWithSchedulerConfig too.
func TestRBACClusterRole(t *testing.T) {
	checkClusterRole(t, minimal, needed)
	all := maps.Clone(needed)
	maps.Copy(all, neededWithSchedulerConfig)
	checkClusterRole(t, minimal+"schedulerConfig: |\n  apiVersion: kubescheduler.config.k8s.io/v1\n  kind: KubeSchedulerConfiguration\n", all)
	overlays := maps.Clone(needed)
	maps.Copy(overlays, neededWithNodeOverlay)
	checkClusterRole(t, minimal+"featureGates: SpotToSpotConsolidation=true, NodeOverlay=true\n", overlays)
	checkClusterRole(t, minimal+"featureGates: NodeOverlay=false\n", needed)
	buffers := maps.Clone(needed)
	maps.Copy(buffers, neededWithCapacityBuffer)
	checkClusterRole(t, minimal+"featureGates: CapacityBuffer=true\n", buffers)
}

func checkClusterRole(t *testing.T, values string, want map[access]string) {
	t.Helper()
	var cr rbacv1.ClusterRole
	strict(t, one(t, mustRender(t, values), "ClusterRole"), &cr)
	granted := map[access]bool{}
	for i, r := range cr.Rules {
		if len(r.NonResourceURLs) > 0 || len(r.ResourceNames) > 0 {
			t.Errorf("rule %d: nonResourceURLs/resourceNames are not expected: %+v", i, r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if g == "*" || res == "*" || v == "*" || strings.Contains(res, "*") {
						t.Errorf("rule %d: wildcard in %+v", i, r)
					}
					a := access{v, g, res}
					if granted[a] {
						t.Errorf("rule %d grants %s twice", i, a)
					}
					granted[a] = true
				}
			}
		}
	}
	for a, why := range want {
		if !granted[a] {
			t.Errorf("ClusterRole does not grant %s, needed by %s", a, why)
		}
	}
	for a := range granted {
		if _, ok := want[a]; !ok {
			t.Errorf("ClusterRole grants %s, which no worker code needs (values %q)", a, values)
		}
	}
}

var (
	// kc.CoreV1().Pods(ns).Delete(  /  .PolicyV1().Evictions(ns).Evict(
	typedCall = regexp.MustCompile(`\.(CoreV1|AppsV1|PolicyV1|StorageV1)\(\)\.(\w+)\([^)]*\)\.(\w+)\(`)
	// factory.Core().V1().Pods().Informer() / .Lister()
	informer = regexp.MustCompile(`\.(Core|Apps|Policy|Storage|Node)\(\)\.V1\(\)\.(\w+)\(\)\.(Informer|Lister)\(\)`)
	// dynFactory.ForResource(apiv1.NodeClaimGVR)
	dynInformer = regexp.MustCompile(`ForResource\((?:apiv1|v1alpha1|provreq|capacitybuffer)\.(\w+GVR)\)`)
	// c.Dynamic.Resource(apiv1.NodeClaimGVR).Patch(
	dynCall = regexp.MustCompile(`\.Resource\((?:apiv1|v1alpha1|provreq|capacitybuffer)\.(\w+GVR)\)(?:\.Namespace\([^)]*\))?\.(\w+)\(`)
	// NodeClaimGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	gvrDef = regexp.MustCompile(`(\w+GVR)\s*=\s*schema\.GroupVersionResource\{Group:\s*"([^"]*)",\s*Version:\s*"[^"]*",\s*Resource:\s*"([^"]*)"\}`)
	// Anything that looks like a Kubernetes client call; each such line must
	// be understood by one of the patterns above or listed in notWorker.
	suspicious = regexp.MustCompile(`\.(CoreV1|AppsV1|PolicyV1|StorageV1|Storage|CoordinationV1|RbacV1|BatchV1|ApiextensionsV1|EventsV1|Discovery)\(\)|ForResource\(|\.Resource\(|EventSinkImpl|NewForConfig\(`)
)

var groupOf = map[string]string{"CoreV1": "", "Core": "", "AppsV1": "apps", "Apps": "apps", "PolicyV1": "policy", "Policy": "policy",
	"StorageV1": "storage.k8s.io", "Storage": "storage.k8s.io", "Node": "node.k8s.io"}

// workerFiles lists the non-test Go files of the joinery packages the worker
// binary is built from (go list -deps ./worker), relative to the repo root.
func workerFiles(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f",
		`{{if .Module}}{{if eq .Module.Path "github.com/joinery/joinery"}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{end}}{{end}}`, "./worker")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./worker: %v", err)
	}
	root, _ := filepath.Abs(repoRoot)
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		rel, err := filepath.Rel(root, f[0])
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(rel, "sim") {
			t.Errorf("the worker depends on %s: the local world is not part of the worker", rel)
		}
		for _, g := range f[1:] {
			files = append(files, filepath.ToSlash(filepath.Join(rel, g)))
		}
	}
	sort.Strings(files)
	return files
}

// TestRBACTableMatchesCode scans the worker's source for Kubernetes client
// calls and checks they are exactly the rows of needed: a new call without
// a ClusterRole rule fails here, and so does a rule whose call is gone.
func TestRBACTableMatchesCode(t *testing.T) {
	gvrs := map[string][2]string{}
	for _, f := range []string{"api/v1/doc.go", "api/v1alpha1/nodeoverlay.go", "api/provreq/provreq.go", "api/capacitybuffer/capacitybuffer.go"} {
		src, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range gvrDef.FindAllStringSubmatch(string(src), -1) {
			gvrs[m[1]] = [2]string{m[2], m[3]}
		}
	}
	if len(gvrs) != 6 {
		t.Fatalf("GVRs in api/v1/doc.go, api/v1alpha1, api/provreq and api/capacitybuffer: %v", gvrs)
	}
	found := map[access][]string{}
	add := func(a access, where string) { found[a] = append(found[a], where) }
	files := workerFiles(t)
	if len(files) < 20 {
		t.Fatalf("only %d worker files: %v", len(files), files)
	}
	usesApply := false
	for _, f := range files {
		fh, err := os.Open(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			where := f + ":" + strconv.Itoa(n)
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if strings.Contains(line, "cluster.Apply(") && !strings.HasPrefix(f, "providers/kube/") {
				usesApply = true
			}
			known := false
			for _, m := range typedCall.FindAllStringSubmatch(line, -1) {
				known = true
				group, res, verb := groupOf[m[1]], strings.ToLower(m[2]), strings.ToLower(m[3])
				switch {
				case m[2] == "Evictions" && m[3] == "Evict":
					add(access{"create", "", "pods/eviction"}, where)
				case m[3] == "UpdateStatus":
					add(access{"update", group, res + "/status"}, where)
				case m[3] == "Patch" && strings.Contains(line, `"status")`):
					add(access{"patch", group, res + "/status"}, where)
				default:
					add(access{verb, group, res}, where)
				}
			}
			for _, m := range informer.FindAllStringSubmatch(line, -1) {
				known = true
				add(access{"list", groupOf[m[1]], strings.ToLower(m[2])}, where)
				add(access{"watch", groupOf[m[1]], strings.ToLower(m[2])}, where)
			}
			for _, m := range dynInformer.FindAllStringSubmatch(line, -1) {
				known = true
				g, ok := gvrs[m[1]]
				if !ok {
					t.Errorf("%s: unknown GVR %s", where, m[1])
				}
				add(access{"list", g[0], g[1]}, where)
				add(access{"watch", g[0], g[1]}, where)
			}
			for _, m := range dynCall.FindAllStringSubmatch(line, -1) {
				known = true
				g := gvrs[m[1]]
				res := g[1]
				if strings.Contains(line, `"status")`) {
					res += "/status"
				}
				add(access{strings.ToLower(m[2]), g[0], res}, where)
			}
			if strings.Contains(line, "EventSinkImpl") {
				known = true
				// record.EventBroadcaster creates Events and patches the
				// count of repeated ones (client-go tools/record).
				add(access{"create", "", "events"}, where)
				add(access{"patch", "", "events"}, where)
			}
			if strings.Contains(line, "NewForConfig(") {
				known = true // building a client is no API call
			}
			if !known && suspicious.MatchString(line) {
				skip := false
				for _, nw := range notWorker {
					if f == nw.file && strings.Contains(line, nw.line) {
						skip = true
					}
				}
				if !skip {
					t.Errorf("%s: Kubernetes client call the scanner does not understand; extend rbac_test.go:\n\t%s", where, strings.TrimSpace(line))
				}
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if usesApply {
		t.Errorf("worker code calls cluster.Apply: it needs RBAC for arbitrary kinds; revisit notWorker and the ClusterRole")
	}
	for a, where := range found {
		_, cluster := needed[a]
		_, ns := neededInRole[a]
		_, sched := neededWithSchedulerConfig[a]
		_, overlay := neededWithNodeOverlay[a]
		_, buffer := neededWithCapacityBuffer[a]
		if !cluster && !ns && !sched && !overlay && !buffer {
			t.Errorf("code calls %s (%s) but the RBAC table (and so the ClusterRole) lacks it", a, strings.Join(where, ", "))
		}
	}
	for _, table := range []map[access]string{needed, neededInRole, neededWithSchedulerConfig, neededWithNodeOverlay, neededWithCapacityBuffer} {
		for a, why := range table {
			if _, ok := found[a]; !ok {
				t.Errorf("RBAC table has %s (%s) but no worker code calls it any more", a, why)
			}
		}
	}
}

// TestRBACLeaderElectionRole: the Lease for leader election of the
// pending-pod watcher (controller/leader.go, resourcelock.LeaseLock: get,
// create, update) and the shared-state ConfigMaps (neededInRole) are
// granted by a Role in the release namespace only.
func TestRBACLeaderElectionRole(t *testing.T) {
	var role rbacv1.Role
	strict(t, one(t, mustRender(t, minimal), "Role"), &role)
	if len(role.Rules) != 2 {
		t.Fatalf("rules = %+v", role.Rules)
	}
	cm := role.Rules[1]
	granted := map[access]bool{}
	for _, g := range cm.APIGroups {
		for _, res := range cm.Resources {
			for _, v := range cm.Verbs {
				granted[access{v, g, res}] = true
			}
		}
	}
	for a, why := range neededInRole {
		if !granted[a] {
			t.Errorf("Role does not grant %s, needed by %s", a, why)
		}
	}
	if len(granted) != len(neededInRole) || len(cm.ResourceNames) > 0 {
		t.Errorf("Role's ConfigMap rule %+v grants more than %v", cm, neededInRole)
	}
	r := role.Rules[0]
	got := strings.Join(r.Verbs, ",")
	if len(r.APIGroups) != 1 || r.APIGroups[0] != "coordination.k8s.io" || len(r.Resources) != 1 || r.Resources[0] != "leases" || got != "get,create,update" {
		t.Fatalf("rule = %+v", r)
	}
	src, err := os.ReadFile(filepath.Join(repoRoot, "controller", "leader.go"))
	if err != nil || !strings.Contains(string(src), "resourcelock.LeaseLock") {
		t.Fatalf("controller/leader.go no longer uses a LeaseLock (%v): update the Role", err)
	}
}
