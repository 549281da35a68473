package activities

import (
	"encoding/json"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
)

// launchKubelet is the class's spec.kubelet resolved for the type
// (catalog ResolveKubelet: its expressions evaluated) and the key that
// splits launch templates by it: the resolved settings when the class has
// expressions, so types whose values differ get templates (and user data)
// of their own, as Karpenter splits its templates by resolved maxPods and
// reservations; "" otherwise, leaving other classes' templates as before.
func launchKubelet(cls *apiv1.EC2NodeClass, it *catalog.InstanceType) (*apiv1.KubeletConfiguration, string, error) {
	k, err := it.ResolveKubelet(catalog.LaunchOf(&cls.Spec))
	if err != nil || !catalog.HasKubeletExpressions(cls.Spec.Kubelet) {
		return k, "", err
	}
	b, err := json.Marshal(k)
	return k, string(b), err
}
