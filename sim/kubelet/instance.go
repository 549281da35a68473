package kubelet

// Instance is what a booting node learns of itself from instance metadata
// (IMDS): the local EC2 endpoint's instance, as the node sees it.
type Instance struct {
	ID, InstanceType, Zone, PrivateDNSName, ImageID string
	// UserData is base64, exactly as launched.
	UserData string
	// BlockDevices are the EBS volumes it was launched with.
	BlockDevices []BlockDevice
	// NetworkInterfaces attached at launch (0: the primary only), and how
	// many of them are EFA devices (efa or efa-only interfaces).
	NetworkInterfaces int
	EFAInterfaces     int
}

// BlockDevice is one EBS volume of an instance.
type BlockDevice struct {
	DeviceName string
	VolumeSize int64 // GiB; 0: the image's own size
}
