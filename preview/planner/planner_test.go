package planner

import (
	"reflect"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/solver"
	"github.com/joinery/joinery/solver/resources"
)

func TestExamplesPlan(t *testing.T) {
	docs, errs := ReadFiles("/work/shared/examples/nodepools.yaml", "/work/shared/examples/workloads.yaml")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	b, errs := Build(docs, Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(b.Input.Pods) != 70 || len(b.Input.NodePools) != 4 {
		t.Fatalf("%d pods, %d pools; want 70 and 4", len(b.Input.Pods), len(b.Input.NodePools))
	}
	r := Solve(b.Input)
	if len(r.Plan.Unschedulable) != 0 {
		t.Fatalf("unschedulable: %+v", r.Plan.Unschedulable)
	}
	if r.LowerBound <= 0 || r.Price < r.LowerBound || r.Ratio < 1 {
		t.Errorf("price %.4f, lower bound %.4f, ratio %.3f", r.Price, r.LowerBound, r.Ratio)
	}
}

func TestBadManifestsNameFileDocFieldReason(t *testing.T) {
	y := `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: ok}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: bad}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: Gt, values: [a, b]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicaz: 3
---
kind: Pod
`
	docs, errs := Parse("w.yaml", []byte(y))
	if len(errs) != 1 || errs[0].Doc != 4 || !strings.Contains(errs[0].Error(), "w.yaml document 4: kind/apiVersion: missing") {
		t.Errorf("parse errors %v", errs)
	}
	_, berrs := Build(docs, Options{})
	if len(berrs) != 2 {
		t.Fatalf("build errors %v, want 2", berrs)
	}
	if e := berrs[0]; e.File != "w.yaml" || e.Doc != 2 || e.Name != "bad" || !strings.Contains(e.Field, "requirements[0]") || e.Reason == "" {
		t.Errorf("error %+v", e)
	}
	if e := berrs[1]; e.Doc != 3 || !strings.Contains(e.Reason, "replicaz") {
		t.Errorf("error %+v", e)
	}
}

func TestBuildRefusesV1beta1NamingMigrate(t *testing.T) {
	docs, errs := Parse("old.yaml", []byte(`apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {name: default}
  disruption: {consolidationPolicy: WhenUnderutilized}
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	b, berrs := Build(docs, Options{})
	want := "old.yaml document 1 (NodePool default): apiVersion: karpenter.sh/v1beta1 NodePool default: convert it with `starter migrate -f old.yaml` (Joinery serves karpenter.sh/v1)"
	if len(berrs) != 1 || berrs[0].Error() != want {
		t.Fatalf("errors %v, want %s", berrs, want)
	}
	if len(b.Input.NodePools) != 0 {
		t.Errorf("%d pools built", len(b.Input.NodePools))
	}
}

func TestExistingNodesAndVolumes(t *testing.T) {
	y := `apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {topology.kubernetes.io/zone: us-east-1b, node.kubernetes.io/instance-type: m5.large}
status:
  allocatable: {cpu: "2", memory: 4Gi, pods: "20"}
  capacity: {cpu: "2", memory: 4Gi, pods: "20"}
---
apiVersion: v1
kind: Pod
metadata: {name: running, labels: {app: x}}
spec:
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: 1500m}}}]
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 1Gi}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1c]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {volumeName: pv1}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers: [{name: c, resources: {requests: {cpu: 1}}}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
`
	b := mustBuild(t, "c.yaml", y)
	if len(b.Input.ExistingNodes) != 1 || b.Input.ExistingNodes[0].Available.String() == "" || b.Input.ExistingNodes[0].Available[0] != 500 {
		t.Fatalf("existing nodes %+v", b.Input.ExistingNodes)
	}
	if len(b.Input.ExistingPods) != 1 || b.Input.ExistingPods[0].Zone != "us-east-1b" {
		t.Errorf("existing pods %+v", b.Input.ExistingPods)
	}
	if len(b.Input.Pods) != 1 || len(b.Input.Pods[0].VolumeRequirements) != 1 || b.Input.Pods[0].VolumeRequirements[0][0].Values[0] != "us-east-1c" {
		t.Errorf("pending pods %+v", b.Input.Pods)
	}
}

// FuzzManifests: the manifest reader, the conversion and the solver never
// panic on any input. go test -fuzz FuzzManifests ./planner/
func FuzzManifests(f *testing.F) {
	f.Add([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {replicas: 3, template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}], topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: a}}}]}}}\n"))
	f.Add([]byte("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec: {limits: {cpu: 10}, template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: d}, requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, ports: [{containerPort: 80, hostPort: 80}]}], affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {a: b}}}]}}}\n"))
	f.Add([]byte("---\n: :\n- ["))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, _ := Parse("fuzz.yaml", data)
		b, _ := Build(docs, Options{})
		if b == nil {
			return
		}
		for i := range b.Input.Pods {
			if i > 200 {
				return // replicas: 1e9 would only measure time
			}
		}
		_ = Solve(b.Input)
	})
}

// A StatefulSet's pods claim <template>-<set>-<ordinal>: replica 0's claim
// is in the manifests, bound to a volume in us-east-1c; replica 1's is made
// from the template without a class, so it gets the default StorageClass
// (WaitForFirstConsumer, allowed only in us-east-1b); a generic ephemeral
// volume's claim of an Immediate class refuses its pod.
func TestBuildStatefulSetVolumes(t *testing.T) {
	y := `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gp3, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies: [{matchLabelExpressions: [{key: topology.ebs.csi.aws.com/zone, values: [us-east-1b]}]}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: now}
provisioner: ebs.csi.aws.com
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-db-0}
spec: {volumeName: pv-db-0, storageClassName: gp3}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-db-0}
spec:
  capacity: {storage: 10Gi}
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-0}
  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1c]}]}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: scratch}
spec:
  containers: [{name: c}]
  volumes: [{name: tmp, ephemeral: {volumeClaimTemplate: {spec: {storageClassName: now, resources: {requests: {storage: 1Gi}}}}}}]
`
	b := mustBuild(t, "s.yaml", y)
	got := map[string]solver.Pod{}
	for _, p := range b.Input.Pods {
		got[p.Name] = p
	}
	for name, zone := range map[string]string{"db-0": "us-east-1c", "db-1": "us-east-1b"} {
		p := got[name]
		if len(p.VolumeRequirements) != 1 || len(p.VolumeRequirements[0]) != 1 || p.VolumeRequirements[0][0].Key != apiv1.LabelZone ||
			!reflect.DeepEqual(p.VolumeRequirements[0][0].Values, []string{zone}) || p.Refused != "" {
			t.Errorf("%s: volume requirements %v refused %q, want zone %s", name, p.VolumeRequirements, p.Refused, zone)
		}
	}
	if r := got["scratch"].Refused; !strings.Contains(r, "default/scratch-tmp is unbound and its StorageClass now binds Immediate") {
		t.Errorf("scratch: refused %q", r)
	}
}

// mustBuild parses and builds one manifest file's text, failing on any error.
func mustBuild(t *testing.T, file, y string) *Built {
	t.Helper()
	docs, errs := Parse(file, []byte(y))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	b, errs := Build(docs, Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return b
}

// Every field of Karpenter v1.14's EC2NodeClass and NodePool decodes (no
// strict-decoding error); instanceStorePolicy RAID0 is honoured (a pod
// asking 60G of ephemeral storage gets a type whose instance store holds
// it, with the root volume only 20Gi), a refused value (a placement group
// selector naming both a name and an id, which the CRD refuses) skips its
// pool with a warning naming it, and static and Balanced NodePools fail
// validation with the reason.
func TestBuildKarpenterV114Fields(t *testing.T) {
	y := `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: raid}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  instanceStorePolicy: RAID0
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: everything}
spec:
  amiFamily: AL2023
  amiSelectorTerms: [{ssmParameter: /my/ami, owner: self}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{id: subnet-1}]
  securityGroupSelectorTerms: [{name: sg}]
  capacityReservationSelectorTerms: [{id: cr-0123456789abcdef0}, {tags: {a: b}, ownerID: "012345678901", instanceMatchCriteria: open}]
  placementGroupSelector: {name: pg, id: pg-0123}
  associatePublicIPAddress: false
  ipPrefixCount: 1
  instanceStorePolicy: RAID0
  networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 0, deviceIndex: 1, interfaceType: efa-only}]
  detailedMonitoring: true
  connectionTracking: {tcpEstablishedTimeout: 432000, udpStreamTimeout: 180, udpTimeout: 30}
  context: c-123
  cpuOptions: {nestedVirtualization: enabled}
  blockDeviceMappings: [{deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 50Gi, volumeType: gp3, iops: 3000, throughput: 125, encrypted: true, kmsKeyID: k, deleteOnTermination: true, snapshotID: snap-1, volumeInitializationRate: 100}}]
  metadataOptions: {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 1, httpTokens: required}
  tags: {team: a}
  userData: "echo hi"
  kubelet: {maxPods: 110, podsPerCore: 10, clusterDNS: [10.0.0.10], systemReserved: {cpu: 100m}, kubeReserved: {cpu: 100m}, evictionHard: {memory.available: 5%}, evictionSoft: {memory.available: 10%}, evictionSoftGracePeriod: {memory.available: 1m}, evictionMaxPodGracePeriod: 60, imageGCHighThresholdPercent: 85, imageGCLowThresholdPercent: 80, cpuCFSQuota: true}
status:
  capacityReservations: [{availabilityZone: us-east-1a, id: cr-0123456789abcdef0, instanceMatchCriteria: targeted, instanceType: m5.large, ownerID: "012345678901", reservationType: default, interruptible: false, state: active}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: raid}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: raid}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: refused}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: everything}
status: {nodes: 3, nodeClassObservedGeneration: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: scratch}
spec:
  containers: [{name: c, resources: {requests: {cpu: 500m, ephemeral-storage: 60G}}}]
`
	b := mustBuild(t, "k.yaml", y)
	if len(b.Input.NodePools) != 1 || b.Input.NodePools[0].Name != "raid" {
		t.Fatalf("pools %d, want only raid", len(b.Input.NodePools))
	}
	found := false
	for _, w := range b.Warnings {
		if strings.Contains(w, "NodePool refused skipped: EC2NodeClass everything sets fields Joinery does not support: spec.placementGroupSelector: set exactly one of name and id") &&
			!strings.Contains(w, "capacityReservationSelectorTerms") && !strings.Contains(w, "networkInterfaces") &&
			!strings.Contains(w, "ssmParameter") && !strings.Contains(w, "volumeInitializationRate") &&
			!strings.Contains(w, "detailedMonitoring") && !strings.Contains(w, "cpuOptions") {
			found = true
		}
	}
	if !found {
		t.Errorf("warnings %q: want the refused pool with its fields", b.Warnings)
	}
	r := Solve(b.Input)
	if len(r.Plan.NewNodeClaims) != 1 {
		t.Fatalf("plan %+v", r.Plan)
	}
	it := r.Plan.NewNodeClaims[0].InstanceTypes[0]
	if it.Type.LocalNVMeGB < 60 || it.Shape.Capacity[resources.EphemeralStorage] != it.Type.LocalNVMeGB*1_000_000_000 {
		t.Errorf("pod placed on %s (instance store %d GB, ephemeral %d), want its instance store to hold 60G", it.Type.Name, it.Type.LocalNVMeGB, it.Shape.Capacity[resources.EphemeralStorage])
	}

	bad := `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: static}
spec:
  replicas: 3
  disruption: {consolidationPolicy: Balanced, consolidateAfter: 1m}
  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: raid}}}
`
	docs, errs := Parse("b.yaml", []byte(bad))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	sb, errs := Build(docs, Options{})
	// Balanced is honoured (disruption.Approve); a static pool (replicas)
	// is valid, never planned for pods, and its 3 replicas are planned
	// apart (SolveAll).
	if len(errs) != 0 {
		t.Errorf("errors %v", errs)
	}
	if len(sb.Static) != 1 || sb.Static[0].Want != 3 || len(sb.Static[0].Input.Pods) != 3 || len(sb.Input.NodePools) != 0 {
		t.Errorf("static pool: %+v, %d pools planned for pods", sb.Static, len(sb.Input.NodePools))
	}
}
