package activities

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/aws/bootstrap"
	"github.com/joinery/joinery/workflows"
)

// launchPlan is one CreateFleet request's launch templates and overrides,
// and what each offering boots with.
// It is a launch's progress in its heartbeat, hence exported fields.
type launchPlan struct {
	Configs        []aws.LaunchConfig
	Image          map[string]string // instance type -> image id
	Subnet         map[string]string // zone -> subnet id
	SecurityGroups []string
	// Prioritized: NodeOverlays set the offerings' prices, so CreateFleet
	// goes by them (cloud.LaunchRequest.Prioritized).
	Prioritized bool
	// Reserved is the addresses predicted for this launch, subnet id ->
	// count, held in flight until CreateFleet answers (subnetPicker.fit).
	Reserved map[string]int `json:",omitempty"`
	// ReservationType and Interruptible: the kind of reservation a
	// reserved launch goes into (nodeclass.ReservedLaunchOfferings).
	ReservationType string `json:",omitempty"`
	Interruptible   bool   `json:",omitempty"`
}

// launchPlan groups the request's offerings by the image their instance
// type needs (the first of status.amis it meets: arm64 types get the arm64
// image, GPU types the nvidia one) and makes sure one launch template per
// image exists. A reserved request gets one template per image and
// capacity reservation, each targeting its reservation (and labelling its
// nodes with it); a reserved offering whose reservation the class's status
// no longer lists is left out. Offerings no image or subnet serves, and
// types the class's CPU options rule out, are left out; none left is an
// error naming why.
func (a *Launch) launchPlan(ctx context.Context, nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass, req workflows.LaunchRequest, prog *progressLog) (_ launchPlan, err error) {
	subnets := prog.Subnets
	if subnets == nil {
		if subnets, err = a.subnets.choose(ctx, a.cloud, cls); err != nil {
			return launchPlan{}, err
		}
		prog.chose(subnets)
	}
	lp := launchPlan{Image: map[string]string{}, Subnet: subnets}
	if req.CapacityType == apiv1.CapacityTypeReserved {
		var kind nodeclass.ReservationKind
		req.Offerings, kind = nodeclass.ReservedLaunchOfferings(cls, req.Offerings)
		lp.ReservationType, lp.Interruptible = kind.Type, kind.Interruptible
	}
	for _, g := range cls.Status.SecurityGroups {
		lp.SecurityGroups = append(lp.SecurityGroups, g.ID)
	}
	fits, short := a.addressFit(ctx, cls, req, &lp)
	defer func() {
		if err != nil { // nothing launches: the prediction goes back
			a.subnets.settle(cls.Name, lp.Reserved, "", 0)
		}
	}()
	type templateKey struct {
		image, reservation, kubelet string
		ifs                         launchInterfaces
	}
	byImage := map[templateKey]int{} // -> index in lp.Configs
	var skipped []string
	for i, o := range req.Offerings {
		it, ok := a.types.Get(o.InstanceType)
		if !ok {
			skipped = append(skipped, o.InstanceType+": not in the catalog")
			continue
		}
		it = it.For(cls)
		if why := it.Unlaunchable(cls); why != "" {
			// Planned before the class changed.
			skipped = append(skipped, o.InstanceType+": "+why)
			continue
		}
		if !fits[i] {
			skipped = append(skipped, o.InstanceType+"/"+o.Zone+": its subnet has too few free addresses")
			continue
		}
		ami, ok := nodeclass.AMIFor(cls.Status.AMIs, it.Labels())
		if !ok {
			skipped = append(skipped, o.InstanceType+": no image in status.amis serves it")
			continue
		}
		sn, ok := subnets[o.Zone]
		if !ok {
			skipped = append(skipped, o.Zone+": no subnet")
			continue
		}
		reservation := ""
		if req.CapacityType == apiv1.CapacityTypeReserved {
			if r, ok := nodeclass.ReservationFor(cls, o.ReservationID); !ok || r.InstanceType != o.InstanceType || r.AvailabilityZone != o.Zone {
				skipped = append(skipped, fmt.Sprintf("%s/%s: capacity reservation %q is not in status.capacityReservations", o.InstanceType, o.Zone, o.ReservationID))
				continue
			}
			reservation = o.ReservationID
		}
		kubelet, kubeletKey, err := launchKubelet(cls, it)
		if err != nil {
			skipped = append(skipped, o.InstanceType+": "+err.Error())
			continue
		}
		key := templateKey{ami.ID, reservation, kubeletKey, interfacesFor(nc, cls, it)}
		i, ok := byImage[key]
		if !ok {
			name, err := a.launchTemplate(ctx, nc, cls, req.CapacityType, reservationOn(cls, reservation), ami.ID, lp.SecurityGroups, key.ifs, kubelet, prog)
			if err != nil {
				return launchPlan{}, err
			}
			i = len(lp.Configs)
			byImage[key] = i
			lp.Configs = append(lp.Configs, aws.LaunchConfig{LaunchTemplateName: name, CapacityReservationID: reservation})
		}
		lp.Configs[i].Overrides = append(lp.Configs[i].Overrides, aws.LaunchOverride{
			InstanceType: o.InstanceType, SubnetID: sn, Zone: o.Zone, ImageID: ami.ID, Price: o.Price,
		})
		lp.Image[o.InstanceType] = ami.ID
	}
	if len(lp.Configs) == 0 {
		if short != nil {
			return launchPlan{}, short // every zone left is short of addresses: plan elsewhere
		}
		return launchPlan{}, fmt.Errorf("EC2NodeClass %s can launch none of the %d offerings: %s", cls.Name, len(req.Offerings), strings.Join(skipped, "; "))
	}
	return lp, nil
}

// launchTemplate returns the name of the launch template for one image of
// a NodeClaim (and, for a reserved launch, one capacity reservation),
// creating it if EC2 does not have it (nor this worker or an earlier
// attempt saw it).
func (a *Launch) launchTemplate(ctx context.Context, nc *apiv1.NodeClaim, cls *apiv1.EC2NodeClass, capacityType string, res reservedOn, imageID string, groups []string,
	ifs launchInterfaces, kubelet *apiv1.KubeletConfiguration, prog *progressLog) (string, error) {
	reservation := res.ID
	family, err := bootstrap.FamilyOf(&cls.Spec)
	if err != nil {
		return "", fmt.Errorf("EC2NodeClass %s: %w", cls.Name, err)
	}
	userData, err := bootstrap.Generate(bootstrap.Options{
		Family: family, Cluster: a.clusterFacts, Labels: nodeLabels(nc, capacityType, res),
		Taints: append(slices.Clone(nc.Spec.Taints), nc.Spec.StartupTaints...), Kubelet: kubelet, UserData: cls.Spec.UserData,
		RAID0: cls.Spec.RAID0(), MaxPods: ifs.MaxPods,
	})
	if err != nil {
		return "", fmt.Errorf("EC2NodeClass %s user data: %w", cls.Name, err)
	}
	tags := launchTags(cls)
	maps.Copy(tags, nodeclass.OwnershipTags(a.cloud.ClusterName(), cls.Name))
	tags[apiv1.TagNodePool] = nc.Labels[apiv1.LabelNodePool]
	data := aws.LaunchTemplateData{
		ImageID: imageID, UserData: userData, InstanceProfile: cls.Status.InstanceProfile, SecurityGroupIDs: groups,
		BlockDevices: blockDevices(cls, family), MetadataOptions: metadataOptions(cls), Tags: tags,
		CapacityReservationID: reservation, MarketType: res.marketType(),
		// A class that counts on reservations keeps its spot and on-demand
		// launches out of open ones (Karpenter's targeted launch mode);
		// other classes' templates are as before (their names unchanged).
		NoCapacityReservations:   reservation == "" && len(cls.Spec.CapacityReservationSelectorTerms) > 0,
		DetailedMonitoring:       cls.Spec.DetailedMonitoring != nil && *cls.Spec.DetailedMonitoring,
		AssociatePublicIPAddress: cls.Spec.AssociatePublicIPAddress, ConnectionTracking: cls.Spec.ConnectionTracking,
		NestedVirtualization: nestedVirtualization(cls), EnclavesEnabled: cls.Spec.WantsEnclaves(),
	}
	data.IPv4PrefixCount, data.IPv6PrefixCount = prefixCounts(cls, a.clusterFacts.DNSIP)
	data.NetworkInterfaces, data.EFAInterfaces = cls.Spec.NetworkInterfaces, ifs.EFA
	if pg := launchGroup(nc, cls); pg != nil {
		data.PlacementGroupID, data.PartitionNumber = pg.ID, partitionOf(nc, pg)
	}
	name, err := nodeclass.LaunchTemplateName(a.cloud.ClusterName(), data)
	if err != nil {
		return "", err
	}
	if !a.templates.has(name) && !prog.hasTemplate(name) {
		lt, err := a.cloud.EnsureLaunchTemplate(ctx, name, data)
		if err != nil {
			return "", err
		}
		a.templates.add(name, lt.Created)
	}
	prog.madeTemplate(name)
	return name, nil
}

// nestedVirtualization is the class's spec.cpuOptions.nestedVirtualization
// ("" when unset: the template sends no CpuOptions).
func nestedVirtualization(cls *apiv1.EC2NodeClass) string {
	if o := cls.Spec.CPUOptions; o != nil && o.NestedVirtualization != nil {
		return *o.NestedVirtualization
	}
	return ""
}

// nodeLabels are the labels a node registers with through user data: the
// NodeClaim's (template labels, NodePool, single-value requirements) and
// the capacity type (and the capacity reservation of a reserved node),
// without Joinery's bookkeeping label.
func nodeLabels(nc *apiv1.NodeClaim, capacityType string, res reservedOn) map[string]string {
	l := claimLabels(nc)
	delete(l, LabelProvisionBatch)
	l[apiv1.LabelCapacityType] = capacityType
	if res.ID != "" {
		maps.Copy(l, reservationLabels(res.ID, res.Type, res.Interruptible))
	}
	return l
}

// reservationLabels are a reserved node's labels, as Karpenter sets them:
// the reservation's id, type and interruptibility ("true"/"false").
func reservationLabels(id, typ string, interruptible bool) map[string]string {
	if typ == "" {
		typ = apiv1.CapacityReservationTypeDefault
	}
	return map[string]string{apiv1.LabelCapacityReservationID: id, apiv1.LabelCapacityReservationType: typ,
		apiv1.LabelCapacityReservationInterruptible: strconv.FormatBool(interruptible)}
}

// reservedOn is the reservation a reserved launch template targets.
type reservedOn struct {
	ID, Type      string
	Interruptible bool
}

// reservationOn is the class's reservation id as a reservedOn (zero for "").
func reservationOn(cls *apiv1.EC2NodeClass, id string) reservedOn {
	if id == "" {
		return reservedOn{}
	}
	r, _ := nodeclass.ReservationFor(cls, id)
	return reservedOn{ID: id, Type: r.ReservationType, Interruptible: r.Interruptible}
}

// marketType is the template's InstanceMarketOptions.MarketType, as
// Karpenter sets it for capacity blocks and interruptible reservations.
func (r reservedOn) marketType() string {
	switch {
	case r.ID == "":
		return ""
	case r.Type == apiv1.CapacityReservationTypeCapacityBlock:
		return "capacity-block"
	case r.Interruptible:
		return "interruptible-capacity-reservation"
	}
	return ""
}

// launchTags are the class's spec.tags without the keys Joinery owns.
func launchTags(cls *apiv1.EC2NodeClass) map[string]string {
	tags := map[string]string{}
	for k, v := range cls.Spec.Tags {
		tags[k] = v
	}
	return tags
}

// blockDevices are the class's, or the family's defaults.
func blockDevices(cls *apiv1.EC2NodeClass, family string) []apiv1.BlockDeviceMapping {
	if len(cls.Spec.BlockDeviceMappings) > 0 {
		return cls.Spec.BlockDeviceMappings
	}
	return apiv1.DefaultBlockDeviceMappings(family)
}

// templateTTL is how long a launch template known to exist is used
// without asking EC2 again.
const templateTTL = 5 * time.Minute

// templateCache remembers launch templates known to exist, and when EC2
// made them.
type templateCache struct {
	mu      sync.Mutex
	known   map[string]time.Time
	created map[string]time.Time
}

func (c *templateCache) has(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.known[name]
	return ok && time.Since(at) < templateTTL
}

func (c *templateCache) add(name string, created time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil {
		c.known, c.created = map[string]time.Time{}, map[string]time.Time{}
	}
	c.known[name] = time.Now()
	if !created.IsZero() {
		c.created[name] = created
	}
}

// made is when EC2 made a template this worker knows (ok false: unknown).
func (c *templateCache) made(name string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.created[name]
	return t, ok
}

// forget drops everything: a launch found a template missing.
func (c *templateCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.known, c.created = nil, nil
}

// metadataOptions are the class's, with Karpenter's CRD defaults for what
// it leaves out (IMDS on, IPv6 off, hop limit 1, tokens required).
func metadataOptions(cls *apiv1.EC2NodeClass) *apiv1.MetadataOptions {
	str := func(v *string, def string) *string {
		if v != nil {
			return v
		}
		return &def
	}
	var m apiv1.MetadataOptions
	if cls.Spec.MetadataOptions != nil {
		m = *cls.Spec.MetadataOptions
	}
	hop := int64(1)
	if m.HTTPPutResponseHopLimit != nil {
		hop = *m.HTTPPutResponseHopLimit
	}
	return &apiv1.MetadataOptions{
		HTTPEndpoint: str(m.HTTPEndpoint, "enabled"), HTTPProtocolIPv6: str(m.HTTPProtocolIPv6, "disabled"),
		HTTPPutResponseHopLimit: &hop, HTTPTokens: str(m.HTTPTokens, "required"),
	}
}

// prefixCounts is spec.ipPrefixCount as the primary interface's IPv4 or,
// in an IPv6 cluster (its kube-dns address is IPv6, as Karpenter tells the
// family), IPv6 prefix count; both nil when the class sets none.
func prefixCounts(cls *apiv1.EC2NodeClass, dnsIP string) (v4, v6 *int32) {
	n := cls.Spec.IPPrefixCount
	if n == nil {
		return nil, nil
	}
	count := *n
	if ip := net.ParseIP(dnsIP); ip != nil && ip.To4() == nil {
		return nil, &count
	}
	return &count, nil
}
