package disruption

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PDBBlocking says whether PodDisruptionBudgets block the pod's eviction
// and which: a selecting PDB that allows no disruption (that one), or
// several selecting it (all: the eviction API refuses such pods).
func PDBBlocking(pdbs []*policyv1.PodDisruptionBudget, p *corev1.Pod) (bool, []string) {
	var sel, zero []string
	for _, pdb := range pdbs {
		if pdb.Namespace != p.Namespace || !Selects(pdb.Spec.Selector, p.Labels) {
			continue
		}
		sel = append(sel, pdb.Namespace+"/"+pdb.Name)
		if pdb.Status.DisruptionsAllowed == 0 {
			zero = append(zero, pdb.Namespace+"/"+pdb.Name)
		}
	}
	switch {
	case len(sel) > 1:
		return true, sel
	case len(zero) > 0:
		return true, zero[:1]
	}
	return false, nil
}

// Selects reports whether a label selector matches labels (nil selects nothing).
func Selects(sel *metav1.LabelSelector, lbls map[string]string) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(lbls))
}
