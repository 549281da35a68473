// Package migrate converts Karpenter v1beta1 NodePools (karpenter.sh/v1beta1)
// and EC2NodeClasses (karpenter.k8s.aws/v1beta1) to v1, following Karpenter's
// v1 migration rules (the v1.0 conversion webhooks, kubernetes-sigs/karpenter
// and aws/karpenter-provider-aws pkg/apis/v1/*_conversion.go, and the "v1
// Migration" upgrade guide), behind `starter migrate`. It is pure: objects
// in, objects, changes and refusals out.
//
// NodePool:
//   - consolidationPolicy WhenUnderutilized -> WhenEmptyOrUnderutilized, and
//     consolidateAfter (required in v1) 0s when unset, what WhenUnderutilized
//     did; WhenEmpty keeps its consolidateAfter. consolidateAfter Never
//     stays Never (consolidation off, as in v1beta1; the webhook writes 0s).
//   - spec.disruption.expireAfter -> spec.template.spec.expireAfter.
//   - nodeClassRef {name[, kind, apiVersion]} -> {group: karpenter.k8s.aws,
//     kind: EC2NodeClass, name}.
//   - spec.template.spec.kubelet -> the EC2NodeClass's spec.kubelet; when
//     NodePools sharing a class have different kubelet settings, the class is
//     split, one copy per distinct setting, as the guide says to (the
//     pools moved to a copy drift). Budgets, limits, weight, requirements,
//     taints and template metadata are unchanged.
//
// EC2NodeClass:
//   - amiFamily AL2, AL2023, Bottlerocket, Windows2019 or Windows2022 without
//     amiSelectorTerms -> amiSelectorTerms [{alias: <family>@latest}] (the
//     version from the compatibility.karpenter.k8s.aws/v1-alias-version
//     annotation when set) and no amiFamily; with amiSelectorTerms both are
//     kept. Ubuntu with amiSelectorTerms -> AL2 (the same user data) with
//     Ubuntu's root volume /dev/sda1 when blockDeviceMappings is unset;
//     Ubuntu without them is refused (v1 has no Ubuntu family).
//   - metadataOptions.httpPutResponseHopLimit: v1beta1's default 2 is written
//     when unset (v1's default is 1), so pods keep the IMDS access they had.
//   - role, instanceProfile, selector terms, block devices, user data and
//     tags are unchanged.
//
// Every object: status and the fields the API server sets (uid,
// resourceVersion, managedFields, ...) are removed, and so are Karpenter's
// compatibility annotations on v1 objects read back from a cluster
// (compatibility.karpenter.sh/v1beta1-kubelet-conversion moves to the class
// as spec.template.spec.kubelet would). A v1 object without them is
// unchanged; objects of other groups pass through.
//
// Refused, with the field and the reason: fields outside the v1beta1
// schemas, objects v1beta1 itself refuses (WhenEmpty without
// consolidateAfter, template resources ...), what v1 has no equivalent for
// (Ubuntu without amiSelectorTerms, the tag eks:eks-cluster-name),
// kubelet settings whose EC2NodeClass is not among the inputs, v1alpha5
// Provisioners and Machines and v1alpha1 AWSNodeTemplates (convert them to
// v1beta1 first), v1beta1 NodeClaims (made by the controller), and a
// result that does not decode strictly as Joinery's v1 types or fails
// NodePool validation.
package migrate
