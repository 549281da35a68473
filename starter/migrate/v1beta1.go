package migrate

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Karpenter v1beta1 schemas (kubernetes-sigs/karpenter and
// aws/karpenter-provider-aws pkg/apis/v1beta1 as of v0.37, the last v1beta1
// release): every field a v1beta1 NodePool or EC2NodeClass may set, so that
// an input field outside them is refused by path rather than dropped. Only
// the shape is used (unknownFields and the typed decode); the conversion
// works on the objects as written.

type nodePoolV1beta1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Template struct {
			Metadata struct {
				Labels      map[string]string `json:"labels,omitempty"`
				Annotations map[string]string `json:"annotations,omitempty"`
			} `json:"metadata,omitempty"`
			Spec struct {
				Taints        []corev1.Taint `json:"taints,omitempty"`
				StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
				Requirements  []struct {
					Key       string   `json:"key"`
					Operator  string   `json:"operator"`
					Values    []string `json:"values,omitempty"`
					MinValues *int     `json:"minValues,omitempty"`
				} `json:"requirements,omitempty"`
				Resources *struct {
					Requests corev1.ResourceList `json:"requests,omitempty"`
				} `json:"resources,omitempty"`
				Kubelet      *kubeletV1beta1 `json:"kubelet,omitempty"`
				NodeClassRef *struct {
					Kind       string `json:"kind,omitempty"`
					Name       string `json:"name"`
					APIVersion string `json:"apiVersion,omitempty"`
				} `json:"nodeClassRef"`
			} `json:"spec"`
		} `json:"template"`
		Disruption *struct {
			ConsolidateAfter    *string `json:"consolidateAfter,omitempty"`
			ConsolidationPolicy string  `json:"consolidationPolicy,omitempty"`
			ExpireAfter         *string `json:"expireAfter,omitempty"`
			Budgets             []struct {
				Nodes    string           `json:"nodes"`
				Schedule *string          `json:"schedule,omitempty"`
				Duration *metav1.Duration `json:"duration,omitempty"`
			} `json:"budgets,omitempty"`
		} `json:"disruption,omitempty"`
		Limits corev1.ResourceList `json:"limits,omitempty"`
		Weight *int32              `json:"weight,omitempty"`
	} `json:"spec"`
	// Status is written by the controller; any shape is accepted and dropped.
	Status map[string]interface{} `json:"status,omitempty"`
}

// kubeletV1beta1 is v1beta1 NodePool spec.template.spec.kubelet, a fixed
// set of fields (v1's EC2NodeClass spec.kubelet takes these and any other
// kubelet field): decoded strictly, so a typo is refused by name.
type kubeletV1beta1 struct {
	MaxPods                     *int32                     `json:"maxPods,omitempty"`
	PodsPerCore                 *int32                     `json:"podsPerCore,omitempty"`
	SystemReserved              map[string]string          `json:"systemReserved,omitempty"`
	KubeReserved                map[string]string          `json:"kubeReserved,omitempty"`
	EvictionHard                map[string]string          `json:"evictionHard,omitempty"`
	EvictionSoft                map[string]string          `json:"evictionSoft,omitempty"`
	EvictionSoftGracePeriod     map[string]metav1.Duration `json:"evictionSoftGracePeriod,omitempty"`
	EvictionMaxPodGracePeriod   *int32                     `json:"evictionMaxPodGracePeriod,omitempty"`
	ImageGCHighThresholdPercent *int32                     `json:"imageGCHighThresholdPercent,omitempty"`
	ImageGCLowThresholdPercent  *int32                     `json:"imageGCLowThresholdPercent,omitempty"`
	CPUCFSQuota                 *bool                      `json:"cpuCFSQuota,omitempty"`
	ClusterDNS                  []string                   `json:"clusterDNS,omitempty"`
}

type selectorTermV1beta1 struct {
	Tags map[string]string `json:"tags,omitempty"`
	ID   string            `json:"id,omitempty"`
}

type ec2NodeClassV1beta1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		SubnetSelectorTerms        []selectorTermV1beta1 `json:"subnetSelectorTerms"`
		SecurityGroupSelectorTerms []struct {
			Tags map[string]string `json:"tags,omitempty"`
			ID   string            `json:"id,omitempty"`
			Name string            `json:"name,omitempty"`
		} `json:"securityGroupSelectorTerms"`
		AssociatePublicIPAddress *bool `json:"associatePublicIPAddress,omitempty"`
		AMISelectorTerms         []struct {
			Tags  map[string]string `json:"tags,omitempty"`
			ID    string            `json:"id,omitempty"`
			Name  string            `json:"name,omitempty"`
			Owner string            `json:"owner,omitempty"`
		} `json:"amiSelectorTerms,omitempty"`
		AMIFamily           *string           `json:"amiFamily"`
		UserData            *string           `json:"userData,omitempty"`
		Role                string            `json:"role,omitempty"`
		InstanceProfile     *string           `json:"instanceProfile,omitempty"`
		Tags                map[string]string `json:"tags,omitempty"`
		BlockDeviceMappings []struct {
			DeviceName *string `json:"deviceName,omitempty"`
			EBS        *struct {
				DeleteOnTermination *bool              `json:"deleteOnTermination,omitempty"`
				Encrypted           *bool              `json:"encrypted,omitempty"`
				IOPS                *int64             `json:"iops,omitempty"`
				KMSKeyID            *string            `json:"kmsKeyID,omitempty"`
				SnapshotID          *string            `json:"snapshotID,omitempty"`
				Throughput          *int64             `json:"throughput,omitempty"`
				VolumeSize          *resource.Quantity `json:"volumeSize,omitempty"`
				VolumeType          *string            `json:"volumeType,omitempty"`
			} `json:"ebs,omitempty"`
			RootVolume bool `json:"rootVolume,omitempty"`
		} `json:"blockDeviceMappings,omitempty"`
		InstanceStorePolicy *string `json:"instanceStorePolicy,omitempty"`
		DetailedMonitoring  *bool   `json:"detailedMonitoring,omitempty"`
		MetadataOptions     *struct {
			HTTPEndpoint            *string `json:"httpEndpoint,omitempty"`
			HTTPProtocolIPv6        *string `json:"httpProtocolIPv6,omitempty"`
			HTTPPutResponseHopLimit *int64  `json:"httpPutResponseHopLimit,omitempty"`
			HTTPTokens              *string `json:"httpTokens,omitempty"`
		} `json:"metadataOptions,omitempty"`
		Context *string `json:"context,omitempty"`
	} `json:"spec"`
	Status map[string]interface{} `json:"status,omitempty"`
}
