package disruption

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testPDB(name string, allowed int32, app string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
}

// The PDB that blocks a pod is named: the one allowing nothing, or every
// one when several select the pod (the eviction API refuses such pods).
func TestPDBBlockingNamesTheBudget(t *testing.T) {
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", Labels: map[string]string{"app": "web"}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "default", Labels: map[string]string{"app": "db"}}}
	cases := []struct {
		name    string
		pdbs    []*policyv1.PodDisruptionBudget
		blocked bool
		names   []string
	}{
		{"allows one", []*policyv1.PodDisruptionBudget{testPDB("web", 1, "web")}, false, nil},
		{"allows none", []*policyv1.PodDisruptionBudget{testPDB("db", 0, "db"), testPDB("web", 0, "web")}, true, []string{"default/web"}},
		{"two select it", []*policyv1.PodDisruptionBudget{testPDB("web", 3, "web"), testPDB("all", 5, "web")}, true, []string{"default/web", "default/all"}},
		{"another namespace", func() []*policyv1.PodDisruptionBudget {
			p := testPDB("web", 0, "web")
			p.Namespace = "prod"
			return []*policyv1.PodDisruptionBudget{p}
		}(), false, nil},
	}
	for _, c := range cases {
		blocked, names := PDBBlocking(c.pdbs, web)
		if blocked != c.blocked || !reflect.DeepEqual(names, c.names) {
			t.Errorf("%s: %v %v, want %v %v", c.name, blocked, names, c.blocked, c.names)
		}
	}
	if blocked, _ := PDBBlocking([]*policyv1.PodDisruptionBudget{testPDB("web", 0, "web")}, other); blocked {
		t.Error("a PDB selecting other pods blocks db-0")
	}
}
