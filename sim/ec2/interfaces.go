package ec2

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/joinery/joinery/catalog"
)

// The values of a network interface's InterfaceType (EC2's
// NetworkInterfaceType as a launch template takes it; "" is interface).
const (
	InterfaceTypeInterface = "interface"
	InterfaceTypeEFA       = "efa"
	InterfaceTypeEFAOnly   = "efa-only"
)

// TemplateInterface is one NetworkInterface.N of a launch template: where
// it attaches, its type, and what would give it IP addresses.
type TemplateInterface struct {
	Card, Device int64
	Type         string // "" is interface
	// PublicIP is AssociatePublicIpAddress as sent; Prefixes: a prefix
	// or secondary address count was sent.
	PublicIP *bool
	Prefixes bool
}

// efa reports whether the interface is an EFA device (efa or efa-only).
func (t TemplateInterface) efa() bool {
	return t.Type == InterfaceTypeEFA || t.Type == InterfaceTypeEFAOnly
}

// primary reports whether the interface is the instance's primary one.
func (t TemplateInterface) primary() bool { return t.Card == 0 && t.Device == 0 }

// Interface is one network interface an instance was launched with:
// where it is attached, its type and its private address ("" for an
// efa-only interface, which has none).
type Interface struct {
	Card, Device int
	Type         string
	PrivateIP    string `json:",omitempty"`
}

// EFAInterfaces counts the instance's EFA devices (efa and efa-only
// interfaces): what the EFA device plugin advertises.
func (in Instance) EFAInterfaces() int {
	n := 0
	for _, i := range in.Interfaces {
		if i.Type == InterfaceTypeEFA || i.Type == InterfaceTypeEFAOnly {
			n++
		}
	}
	return n
}

// NoAddressInterfaces counts the instance's default-card interfaces that
// carry no IP addresses (efa-only): interface slots the VPC CNI cannot use.
func (in Instance) NoAddressInterfaces() int {
	n := 0
	for _, i := range in.Interfaces {
		if i.Card == 0 && i.Type == InterfaceTypeEFAOnly {
			n++
		}
	}
	return n
}

// templateInterfaces reads each NetworkInterface.N's card, device and
// type, refusing a type EC2 does not have (CreateLaunchTemplate validates
// the enum; what fits an instance type is checked at launch).
func templateInterfaces(f form, prefix string, nis []int, d *LaunchTemplateData) error {
	for _, i := range nis {
		np := at(prefix, i)
		t := TemplateInterface{Type: f.get(np + ".InterfaceType")}
		switch t.Type {
		case "", InterfaceTypeInterface, InterfaceTypeEFA, InterfaceTypeEFAOnly:
		default:
			return invalidParameter("Value (%s) for parameter interfaceType is invalid. Valid values are interface, efa and efa-only.", t.Type)
		}
		for _, p := range []struct {
			key string
			to  *int64
		}{{".NetworkCardIndex", &t.Card}, {".DeviceIndex", &t.Device}} {
			v, err := countParam(f, np+p.key)
			if err != nil {
				return err
			}
			if v != nil {
				*p.to = *v
			}
		}
		pub, err := boolParam(f, np+".AssociatePublicIpAddress")
		if err != nil {
			return err
		}
		t.PublicIP = pub
		for _, k := range []string{".Ipv4PrefixCount", ".Ipv6PrefixCount", ".SecondaryPrivateIpAddressCount"} {
			t.Prefixes = t.Prefixes || f.get(np+k) != ""
		}
		d.Interfaces = append(d.Interfaces, t)
	}
	return nil
}

// interfacesRefusal is EC2's refusal of the template's interfaces on the
// type, code "" when it launches them. The multiple-interface public IP
// message is EC2's own (karpenter-provider-aws#5666 quotes it);
// "Unsupported" with EC2's generic sentence is what EC2 answers an EFA
// launch on a type or place without EFA; the other sentences are this
// endpoint's, with the codes EC2 gives such parameter errors.
func interfacesRefusal(ifs []TemplateInterface, it *catalog.InstanceType) (code, msg string) {
	if len(ifs) == 0 {
		return "", ""
	}
	if len(ifs) > 1 && slices.ContainsFunc(ifs, func(t TemplateInterface) bool { return t.PublicIP != nil && *t.PublicIP }) {
		return CodeInvalidParameterCombination, "The associatePublicIPAddress parameter cannot be specified when launching with multiple network interfaces."
	}
	seen := map[[2]int64]bool{}
	efa := 0
	for _, t := range ifs {
		k := [2]int64{t.Card, t.Device}
		if seen[k] {
			return CodeInvalidParameterValue, "Each network interface requires a unique device index."
		}
		seen[k] = true
		if code, msg := interfaceRefusal(t, it); code != "" {
			return code, msg
		}
		if t.efa() {
			efa++
		}
	}
	if !seen[[2]int64{0, 0}] {
		return CodeInvalidParameterValue, "A network interface with device index 0 on network card 0 (the primary network interface) is required."
	}
	if efa > it.EFACount {
		return CodeInvalidParameterValue, fmt.Sprintf("The instance type '%s' supports at most %d EFA interfaces; %d were specified.", it.Name, it.EFACount, efa)
	}
	return "", ""
}

// interfaceRefusal is one interface's: its card and device on the type,
// EFA on a type without it, an efa-only primary, addresses on efa-only.
func interfaceRefusal(t TemplateInterface, it *catalog.InstanceType) (code, msg string) {
	switch {
	case t.Card >= int64(it.Cards()):
		return CodeInvalidParameterValue, fmt.Sprintf("Network card index %d is not valid for instance type '%s': it has %d network card(s).", t.Card, it.Name, it.Cards())
	case t.Device >= int64(it.CardENIs(int(t.Card))):
		return CodeInvalidParameterValue, fmt.Sprintf("Device index %d exceeds the %d network interfaces network card %d of instance type '%s' supports.",
			t.Device, it.CardENIs(int(t.Card)), t.Card, it.Name)
	case t.efa() && it.EFACount == 0:
		return CodeUnsupported, "The requested configuration is currently not supported. Please check the documentation for supported configurations."
	case t.Type == InterfaceTypeEFAOnly && t.primary():
		return CodeInvalidParameterCombination, "An EFA-only network interface cannot be the primary network interface (device index 0 on network card 0)."
	case t.Type == InterfaceTypeEFAOnly && (t.Prefixes || t.PublicIP != nil && *t.PublicIP):
		return CodeInvalidParameterValue, "EFA-only network interfaces do not support IP addresses: AssociatePublicIpAddress and prefix or secondary address counts cannot be specified for them."
	}
	return "", ""
}

// attachInterfacesLocked gives a launching instance the template's
// interfaces: the primary one its address, each other ENA or EFA
// interface one address of the subnet, efa-only interfaces none. On an
// error the addresses taken are given back.
func (s *Server) attachInterfacesLocked(o *fleetOverride, in *instance) error {
	for _, t := range o.lt.Data.Interfaces {
		i := Interface{Card: int(t.Card), Device: int(t.Device), Type: t.Type}
		if i.Type == "" {
			i.Type = InterfaceTypeInterface
		}
		switch {
		case t.primary():
			i.PrivateIP = in.PrivateIP
		case i.Type != InterfaceTypeEFAOnly:
			ip, err := o.subnet.allocate()
			if err != nil {
				s.releaseInterfacesLocked(o.subnet, in.Interfaces)
				return err
			}
			i.PrivateIP = ip
		}
		in.Interfaces = append(in.Interfaces, i)
	}
	slices.SortFunc(in.Interfaces, func(a, b Interface) int { return (a.Card*1000 + a.Device) - (b.Card*1000 + b.Device) })
	return nil
}

// releaseInterfacesLocked gives back the addresses of the non-primary
// interfaces.
func (s *Server) releaseInterfacesLocked(sn *subnet, ifs []Interface) {
	for _, i := range ifs {
		if (i.Card != 0 || i.Device != 0) && i.PrivateIP != "" {
			sn.release(i.PrivateIP)
		}
	}
}

// interfacesXML are the instance's network interfaces as DescribeInstances
// shows them: the primary one (its addresses, groups and prefixes), then
// the others with their type and attachment's card and device.
func (s *Server) interfacesXML(in *instance, x instanceXML) []instanceNetworkInterfaceXML {
	primary := s.primaryInterfaceXML(in, x)
	out := []instanceNetworkInterfaceXML{primary}
	for _, i := range in.Interfaces {
		if i.Card == 0 && i.Device == 0 {
			out[0].InterfaceType = i.Type
			continue
		}
		ni := primary
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s/eni/%d/%d", in.ID, i.Card, i.Device)))
		ni.NetworkInterfaceID = "eni-" + hex.EncodeToString(sum[:9])[:17]
		ni.InterfaceType, ni.IPv4Prefixes, ni.PrivateIPAddress, ni.PrivateDNSName, ni.PrivateIPs = i.Type, nil, i.PrivateIP, "", nil
		if i.PrivateIP != "" {
			ni.PrivateDNSName = s.privateDNSName(i.PrivateIP)
			ni.PrivateIPs = []niPrivateAddressXML{{PrivateIPAddress: i.PrivateIP, PrivateDNSName: ni.PrivateDNSName, Primary: true}}
		}
		ni.Attachment.AttachmentID = "eni-attach-" + ni.NetworkInterfaceID[len("eni-"):]
		ni.Attachment.NetworkCardIndex, ni.Attachment.DeviceIndex = i.Card, i.Device
		out = append(out, ni)
	}
	return out
}
