// Package testobj builds the Kubernetes objects unit tests of several
// packages need alike. It imports only API types, so a package's tests
// (the solver's) can use it without client-go's fakes (kubetest).
package testobj

import (
	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceList is the list of the name, quantity pairs given:
// ResourceList("cpu", "500m", "memory", "1Gi").
func ResourceList(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// ReadyNodeClass is EC2NodeClass default as its reconciler leaves it once
// resolved, for tests that plan on it: Ready at generation 1, one amd64
// AMI (ami-1) and one subnet, subnet-a in us-east-1a.
func ReadyNodeClass() *apiv1.EC2NodeClass {
	return &apiv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 1},
		Spec: apiv1.EC2NodeClassSpec{AMISelectorTerms: []apiv1.AMISelectorTerm{{Alias: "al2023@latest"}}},
		Status: apiv1.EC2NodeClassStatus{
			AMIs: []apiv1.AMIStatus{{ID: "ami-1", Requirements: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}},
			Subnets:    []apiv1.SubnetStatus{{ID: "subnet-a", Zone: "us-east-1a"}},
			Conditions: []metav1.Condition{{Type: apiv1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Ready"}},
		}}
}
