package v1

// AMI families (EC2NodeClass spec.amiFamily), as Karpenter spells them.
const (
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyAL2          = "AL2"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyCustom       = "Custom"
)
