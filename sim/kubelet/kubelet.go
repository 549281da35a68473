// Package kubelet stands in for an EKS node's boot and kubelet registration
// in the local world. When the local EC2 endpoint reports an instance
// running, the node agent reads the instance's user data (and nothing else:
// no NodeClaim, no EC2NodeClass) as nodeadm, bootstrap.sh or Bottlerocket
// would, and the kubelet registers the Node with exactly the labels, taints
// and kubelet settings found there, only if the endpoint and CA bundle are
// the local cluster's. Capacity and allocatable follow the EKS formulas for
// the instance type and those settings; providerID is aws:///<zone>/<id>.
// The node boots in phases as on EKS (Phases): the kubelet registers the
// Node NotReady, the CNI comes up, then the Node goes Ready and kwok keeps
// it Ready and runs its pods.
package kubelet

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// KwokAnnotation marks Nodes kwok manages (--manage-nodes-with-annotation-selector).
const KwokAnnotation = "kwok.x-k8s.io/node"

// TaintUninitialized is the taint a kubelet started with
// --cloud-provider=external (as nodeadm and bootstrap.sh start it) registers
// with; the cloud controller manager removes it once it has initialized the Node.
const TaintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"

// ErrNotJoined is wrapped by the error Register returns when the instance
// booted but its kubelet never created a Node (the reason follows).
var ErrNotJoined = errors.New("node did not join")

// Registrar registers Nodes for running instances.
type Registrar struct {
	Kube kubernetes.Interface
	// Hardware is EC2's description of an instance type.
	Hardware func(instanceType string) (Hardware, bool)
	Region   string
	Log      *zap.Logger
	// ClusterEndpoint and ClusterCA (PEM) are the local cluster's API server
	// URL and CA: a node joins only if its user data names both.
	ClusterEndpoint string
	ClusterCA       []byte
	// Image resolves an AMI ID to what EC2 describes of it; nil, or ok
	// false, means a standard custom image of the instance's architecture.
	Image func(id string) (Image, bool)
	// Boot is how long the node takes from EC2's running to registered
	// and from registered to Ready.
	Boot Phases
	// Alive reports whether the instance is still pending or running: one
	// terminated while it boots never registers (nil: always).
	Alive func(id string) bool
	// OnReady, when set, is told when a node went Ready.
	OnReady func(inst Instance, at time.Time)
}

// Image is what DescribeImages shows of an AMI: the node knows its own
// OS, which the sim reads from the image's name.
type Image struct {
	// Arch is "x86_64"/"arm64" (or "amd64"); Variant "standard",
	// "nvidia" or "neuron".
	Arch, Variant     string
	Name, Description string
}

// Phases are the durations of a node's boot after EC2 reports it running.
type Phases struct {
	// Register: OS boot, cloud-init, the node agent (nodeadm init,
	// bootstrap.sh, Bottlerocket's early boot) and the kubelet's start,
	// until the Node is created NotReady.
	Register time.Duration
	// NetworkReady: from registration until the CNI plugin is installed
	// (aws-node's ipamd healthy) and the kubelet reports Ready.
	NetworkReady time.Duration
}

// Register boots the instance: after Boot.Register its kubelet creates the
// Node NotReady, after Boot.NetworkReady more the Node goes Ready; API
// errors are retried for up to a minute. An instance whose user data does
// not make it join (no or unparsable user data, user data its image's node
// agent does not run, another cluster's endpoint or CA, labels the kubelet
// refuses, an image of the wrong architecture) never gets a Node: the
// reason is logged and returned wrapping ErrNotJoined.
func (r *Registrar) Register(ctx context.Context, inst Instance) error {
	if !sleep(ctx, r.Boot.Register) {
		return ctx.Err()
	}
	if r.Alive != nil && !r.Alive(inst.ID) {
		return nil // terminated before its kubelet started
	}
	node, err := r.boot(inst)
	if err != nil {
		r.Log.Warn("node did not join the cluster", zap.String("instance", inst.ID), zap.String("instanceType", inst.InstanceType), zap.String("reason", err.Error()))
		return fmt.Errorf("%w: instance %s: %v", ErrNotJoined, inst.ID, err)
	}
	var created, gone bool
	if err := r.retry(ctx, inst, func() error {
		err := r.register(ctx, inst, node, &created)
		if errors.Is(err, errNodeGone) {
			gone = true
			return nil
		}
		return err
	}); err != nil || gone {
		return err
	}
	if !sleep(ctx, r.Boot.NetworkReady) {
		return ctx.Err()
	}
	if err := r.retry(ctx, inst, func() (err error) { gone, err = r.networkReady(ctx, inst, node.Name); return err }); err != nil || gone {
		return err
	}
	if r.OnReady != nil {
		r.OnReady(inst, time.Now())
	}
	return r.retry(ctx, inst, func() error { return r.registerEBSDriver(ctx, inst, node) })
}

// retry runs f until it succeeds, for up to a minute.
func (r *Registrar) retry(ctx context.Context, inst Instance, f func() error) error {
	var err error
	for i := 0; i < 60; i++ {
		if err = f(); err == nil {
			return nil
		}
		if !sleep(ctx, time.Second) {
			return ctx.Err()
		}
	}
	r.Log.Error("node registration failed", zap.String("instance", inst.ID), zap.Error(err))
	return err
}

// sleep waits d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// boot is the node agent and the kubelet's start: everything that decides
// whether and how the Node will look, from what the instance was launched with.
func (r *Registrar) boot(inst Instance) (*corev1.Node, error) {
	it, ok := r.Hardware(inst.InstanceType)
	if !ok {
		return nil, fmt.Errorf("instance type %s: EC2 does not describe it", inst.InstanceType)
	}
	// The EFA device plugin finds the EFA interfaces the instance was
	// launched with, not the type's limit.
	it.EFA = inst.EFAInterfaces
	variant, family, windowsBuild := "standard", FamilyCustom, ""
	if r.Image != nil && inst.ImageID != "" {
		if im, ok := r.Image(inst.ImageID); ok {
			windowsBuild = windowsBuildOf(im.Name)
			if a := normArch(im.Arch); a != it.Arch {
				return nil, fmt.Errorf("image %s is %s, instance type %s is %s: the kernel does not boot", inst.ImageID, a, it.Name, it.Arch)
			}
			if im.Variant != "" {
				variant = im.Variant
			}
			family = FamilyOfImage(im.Name)
		}
	}
	cfg, err := ParseUserDataFor(family, inst.UserData)
	if err != nil {
		return nil, fmt.Errorf("user data (%s image): %v", family, err)
	}
	if err := r.checkCluster(cfg); err != nil {
		return nil, err
	}
	var refused []string
	for k := range cfg.Labels {
		if kubeletRefusesLabel(k) {
			refused = append(refused, k)
		}
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return nil, fmt.Errorf("kubelet exits: unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v", refused)
	}

	// Labels the kubelet sets itself; --node-labels override them.
	os := "linux"
	if windowsBuild != "" {
		os = "windows"
	}
	labels := map[string]string{
		apiv1.LabelHostname:       inst.PrivateDNSName,
		apiv1.LabelOS:             os,
		apiv1.LabelArch:           it.Arch,
		"beta.kubernetes.io/os":   os,
		"beta.kubernetes.io/arch": it.Arch,
	}
	if windowsBuild != "" {
		labels[apiv1.LabelWindowsBuild] = windowsBuild // the kubelet's own on Windows
	}
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	taints := make([]corev1.Taint, 0, len(cfg.Taints)+1)
	seen := map[[2]string]bool{}
	for _, t := range cfg.Taints {
		id := [2]string{t.Key, string(t.Effect)}
		if seen[id] {
			return nil, fmt.Errorf("register-with taints: %s:%s twice (the API server refuses the Node)", t.Key, t.Effect)
		}
		seen[id] = true
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	taints = append(taints, corev1.Taint{Key: TaintUninitialized, Value: "true", Effect: corev1.TaintEffectNoSchedule},
		corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})

	volume, fs := dataVolumeBytes(inst.BlockDevices, cfg.Format), "xfs"
	if cfg.Format == FormatBottlerocket {
		fs = "ext4"
	}
	if cfg.RAID0 && it.LocalNVMeGB > 0 {
		// The kubelet's filesystem is the RAID0 array of the instance
		// store volumes (their total size, decimal GB as EC2 gives it).
		volume, fs = it.LocalNVMeGB*1_000_000_000, "xfs"
	}
	capacity, allocatable := sizes(it, cfg, filesystemBytes(volume, fs), variant)

	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   inst.PrivateDNSName,
			Labels: labels,
		},
		// nodeadm and bootstrap.sh pass the provider ID to the kubelet.
		Spec: corev1.NodeSpec{ProviderID: "aws:///" + inst.Zone + "/" + inst.ID, Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			NodeInfo:    corev1.NodeSystemInfo{Architecture: it.Arch, OperatingSystem: os, KubeletVersion: "v1.37.2-joinery-sim"},
			Conditions:  registeredConditions(time.Now()),
		},
	}, nil
}

// checkCluster: the kubelet reaches the API server at the endpoint it was
// given and trusts only the CA bundle it was given. Another endpoint is
// another cluster (or nothing); a bundle without the cluster's CA fails TLS.
func (r *Registrar) checkCluster(cfg *BootConfig) error {
	if !sameEndpoint(cfg.Endpoint, r.ClusterEndpoint) {
		return fmt.Errorf("API server endpoint %q is not this cluster's (%s): the kubelet cannot reach it", cfg.Endpoint, r.ClusterEndpoint)
	}
	pemBytes, err := base64.StdEncoding.DecodeString(cfg.CABundle)
	if err != nil {
		return fmt.Errorf("certificate authority is not base64: %v", err)
	}
	given, err := certsDER(pemBytes)
	if err != nil {
		return fmt.Errorf("certificate authority: %v: TLS to the API server fails", err)
	}
	if len(given) == 0 {
		return errors.New("certificate authority holds no PEM certificate: TLS to the API server fails")
	}
	cluster, _ := certsDER(r.ClusterCA)
	for _, g := range given {
		for _, c := range cluster {
			if bytes.Equal(g, c) {
				return nil
			}
		}
	}
	return errors.New("certificate authority does not contain the cluster's CA: x509: certificate signed by unknown authority")
}

func certsDER(b []byte) ([][]byte, error) {
	var out [][]byte
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out, nil
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			return out, err
		}
		out = append(out, blk.Bytes)
	}
}

func sameEndpoint(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil || ua.Scheme != "https" || ub.Scheme != "https" {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		return "443"
	}
	return strings.EqualFold(ua.Hostname(), ub.Hostname()) && port(ua) == port(ub) && strings.TrimSuffix(ua.Path, "/") == strings.TrimSuffix(ub.Path, "/")
}

func normArch(a string) string {
	switch a {
	case "x86_64":
		return "amd64"
	case "aarch64":
		return "arm64"
	}
	return a
}

// kubeletRefusesLabel: the kubelet exits when --node-labels has a label in
// the kubernetes.io or k8s.io domains (or their subdomains) other than those
// it may set itself (k8s.io/kubelet/pkg/apis well_known_labels.go).
func kubeletRefusesLabel(key string) bool {
	domain, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	in := func(d string) bool { return domain == d || strings.HasSuffix(domain, "."+d) }
	if !in("kubernetes.io") && !in("k8s.io") {
		return false
	}
	switch key {
	case "kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch",
		"beta.kubernetes.io/os", "beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type",
		"node.kubernetes.io/instance-type", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
		"failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region":
		return false
	}
	return !in("kubelet.kubernetes.io") && !in("node.kubernetes.io")
}

// register creates the Node (the kubelet), then initializes it as the AWS
// cloud controller manager's node controller does (on EKS the kubelet runs
// with --cloud-provider=external and sets only hostname/os/arch itself):
// node.kubernetes.io/instance-type, topology.kubernetes.io/zone and
// /region (and their beta forms) are added and the uninitialized taint is
// removed. made records that this kubelet's Node was made: once it
// was, a Node deleted since (its instance going away) is errNodeGone,
// never made again.
func (r *Registrar) register(ctx context.Context, inst Instance, node *corev1.Node, made *bool) error {
	nodes := r.Kube.CoreV1().Nodes()
	var created *corev1.Node
	var err error
	if !*made {
		created, err = nodes.Create(ctx, node.DeepCopy(), metav1.CreateOptions{})
		*made = err == nil
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if created == nil { // made by an earlier try, or by another kubelet
		if created, err = nodes.Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
			return nodeGone(err)
		}
		if created.Spec.ProviderID != node.Spec.ProviderID {
			r.Log.Warn("a Node of that name belongs to another instance", zap.String("node", node.Name), zap.String("instance", inst.ID), zap.String("providerID", created.Spec.ProviderID))
			return nil
		}
	}
	// Some API server versions drop status on create: make sure it is set.
	if len(created.Status.Allocatable) == 0 {
		created.Status = node.Status
		if _, err := nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("node %s status: %w", node.Name, nodeGone(err))
		}
	}
	r.Log.Info("node registered", zap.String("node", node.Name), zap.String("instance", inst.ID), zap.String("instanceType", inst.InstanceType))
	return r.initializeAsCloudProvider(ctx, inst, node.Name)
}

// EBS CSI driver facts its node plugin reports (aws-ebs-csi-driver
// pkg/driver: NodeGetInfo's topology segments; the kubelet lists their keys
// in CSINode and labels the Node with them).
const (
	ebsDriver   = "ebs.csi.aws.com"
	ebsZoneKey  = "topology.ebs.csi.aws.com/zone"
	nodeIDsNote = "csi.volume.kubernetes.io/nodeid"
	// ebsNotReadyTaint is the startup taint the EBS CSI driver's node
	// plugin removes once it has registered (its taint watcher): a
	// NodePool lists it in startupTaints so that no pod with a volume
	// lands before the node's attach limit is known.
	ebsNotReadyTaint = "ebs.csi.aws.com/agent-not-ready"
)

// registerEBSDriver is the EBS CSI driver's node plugin registering with
// the kubelet: the kubelet writes the driver into the node's CSINode
// (node ID = instance ID, topology keys, and as allocatable count the
// volume limit the plugin computes from what instance metadata shows it:
// the instance type, the EBS block devices besides the root volume and
// the attached ENIs), and labels and annotates the Node with the driver's
// topology and node ID; then the plugin removes its startup taint
// ebs.csi.aws.com/agent-not-ready if the node registered with it. The
// kube-scheduler's NodeVolumeLimits plugin then holds pods to that limit.
// (The local world stands for a cluster with the EBS CSI driver add-on
// installed; its node plugin's own pod is not simulated.)
func (r *Registrar) registerEBSDriver(ctx context.Context, inst Instance, want *corev1.Node) error {
	it, ok := r.Hardware(inst.InstanceType)
	if !ok {
		return nil
	}
	node, err := r.Kube.CoreV1().Nodes().Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err == nil && node.Spec.ProviderID != want.Spec.ProviderID {
		return nil // deleted since (the instance is going away)
	} else if err != nil {
		return err
	}
	extra := 0
	for _, b := range inst.BlockDevices {
		if b.DeviceName != "/dev/xvda" {
			extra++ // IMDS block-device-mapping lists it as ebsN
		}
	}
	count := it.ebsVolumeLimit(extra, max(inst.NetworkInterfaces, 1))
	driver := storagev1.CSINodeDriver{Name: ebsDriver, NodeID: inst.ID,
		TopologyKeys: []string{apiv1.LabelOS, ebsZoneKey, apiv1.LabelZone},
		Allocatable:  &storagev1.VolumeNodeResources{Count: &count}}
	csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node.Name,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{driver}}}
	csiNodes := r.Kube.StorageV1().CSINodes()
	if _, err := csiNodes.Create(ctx, csiNode, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := csiNodes.Get(ctx, node.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec.Drivers = []storagev1.CSINodeDriver{driver}
			_, err = csiNodes.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("CSINode %s: %w", node.Name, err)
		}
	} else if err != nil {
		return fmt.Errorf("CSINode %s: %w", node.Name, err)
	}
	tainted := false
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := r.Kube.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Labels[ebsZoneKey] = inst.Zone
		n.Annotations[nodeIDsNote] = fmt.Sprintf(`{%q:%q}`, ebsDriver, inst.ID)
		tainted = dropTaint(n, ebsNotReadyTaint) || tainted
		_, err = r.Kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err == nil && tainted {
		go r.watchNotReadyTaint(ctx, node.Name, ebsTaintWatch)
	}
	return err
}

// ebsTaintWatch is how long the EBS CSI driver's taint watcher keeps
// removing its startup taint (aws-ebs-csi-driver taintWatcherDuration):
// whoever puts it back in that time (a controller syncing a NodeClaim's
// startup taints) sees it removed again.
const ebsTaintWatch = 10 * time.Minute

// watchNotReadyTaint removes ebsNotReadyTaint whenever the Node carries it,
// for d or until ctx ends or the Node is gone.
func (r *Registrar) watchNotReadyTaint(ctx context.Context, name string, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	nodes := r.Kube.CoreV1().Nodes()
	for ctx.Err() == nil {
		w, err := nodes.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok || !hasTaintKey(n, ebsNotReadyTaint) {
				continue
			}
			_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := nodes.Get(ctx, name, metav1.GetOptions{})
				if err != nil || !dropTaint(cur, ebsNotReadyTaint) {
					return err
				}
				_, err = nodes.Update(ctx, cur, metav1.UpdateOptions{})
				return err
			})
		}
		w.Stop()
		if _, err := nodes.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return
		}
	}
}

func hasTaintKey(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// dropTaint removes the taints with key from n, reporting whether it had one.
func dropTaint(n *corev1.Node, key string) bool {
	kept := n.Spec.Taints[:0]
	for _, t := range n.Spec.Taints {
		if t.Key != key {
			kept = append(kept, t)
		}
	}
	had := len(kept) != len(n.Spec.Taints)
	n.Spec.Taints = kept
	return had
}

// initializeAsCloudProvider is the cloud node manager's part.
func (r *Registrar) initializeAsCloudProvider(ctx context.Context, inst Instance, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := r.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nodeGone(err)
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		for k, v := range map[string]string{
			apiv1.LabelInstanceType:                    inst.InstanceType,
			"beta.kubernetes.io/instance-type":         inst.InstanceType,
			apiv1.LabelZone:                            inst.Zone,
			"failure-domain.beta.kubernetes.io/zone":   inst.Zone,
			apiv1.LabelRegion:                          r.Region,
			"failure-domain.beta.kubernetes.io/region": r.Region,
		} {
			n.Labels[k] = v
		}
		kept := n.Spec.Taints[:0]
		for _, t := range n.Spec.Taints {
			if t.Key != TaintUninitialized {
				kept = append(kept, t)
			}
		}
		n.Spec.Taints = kept
		_, err = r.Kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return nodeGone(err)
	})
}

// errNodeGone: the Node this kubelet registered was deleted.
var errNodeGone = errors.New("node deleted")

// nodeGone marks a NotFound as errNodeGone.
func nodeGone(err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %v", errNodeGone, err)
	}
	return err
}

// dataVolumeBytes is the size of the volume the kubelet's ephemeral
// storage lives on, as the instance was launched: Bottlerocket's data
// volume /dev/xvdb, else the root volume /dev/xvda, else the first; 20 GiB
// (the AL2023 image's own root volume) when the launch set none.
func dataVolumeBytes(devs []BlockDevice, format string) int64 {
	want := "/dev/xvda"
	switch format {
	case FormatBottlerocket:
		want = "/dev/xvdb"
	case FormatWindows:
		want = "/dev/sda1"
	}
	var pick *BlockDevice
	for i := range devs {
		if devs[i].DeviceName == want {
			pick = &devs[i]
		}
	}
	if pick == nil && len(devs) > 0 {
		pick = &devs[0]
	}
	if pick == nil || pick.VolumeSize == 0 {
		return 20 << 30
	}
	return pick.VolumeSize << 30
}
