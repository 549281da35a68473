package schedulerconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
)

// zoneConstraint spreads over zones, maxSkew 1, DoNotSchedule (flow style).
const zoneConstraint = "{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}"

// listPluginConfig is a profile's pluginConfig giving PodTopologySpread
// the List defaults of the given constraints (flow-style YAML, one each).
func listPluginConfig(constraints ...string) string {
	s := "  pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:\n"
	for _, c := range constraints {
		s += "      - " + c + "\n"
	}
	return s
}

// A List profile for default-scheduler and a System one for a second
// scheduler: each gets its own defaults, by schedulerName.
func TestParseListAndSystemProfiles(t *testing.T) {
	sd, err := Parse([]byte(`
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
` + listPluginConfig(zoneConstraint, "{maxSkew: 2, topologyKey: karpenter.sh/capacity-type, whenUnsatisfiable: ScheduleAnyway}") + `- schedulerName: batch
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := solver.SpreadDefaults{
		"default-scheduler": {
			{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule},
			{MaxSkew: 2, TopologyKey: "karpenter.sh/capacity-type", WhenUnsatisfiable: corev1.ScheduleAnyway},
		},
		"batch": {
			{MaxSkew: 3, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway},
			{MaxSkew: 5, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway},
		},
	}
	if !reflect.DeepEqual(sd, want) {
		t.Errorf("defaults %+v,\nwant %+v", sd, want)
	}
}

// No profiles: one default-scheduler profile with the System defaults; a
// List with no constraints, or the plugin disabled, gives none; disabling
// only its score keeps the DoNotSchedule defaults.
func TestParseDefaultsAndDisabledPlugin(t *testing.T) {
	const head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	list := "\n" + listPluginConfig(zoneConstraint, "{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}")
	zone := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule}
	for _, c := range []struct {
		name, body string
		want       solver.SpreadDefaults
	}{
		{"no profiles", "", solver.SpreadDefaults{"default-scheduler": solver.SystemSpreadDefaults()}},
		{"empty list", "profiles:\n- pluginConfig: [{name: PodTopologySpread, args: {defaultingType: List}}]\n", solver.SpreadDefaults{}},
		{"disabled at multiPoint", "profiles:\n- plugins: {multiPoint: {disabled: [{name: PodTopologySpread}]}}\n" + list, solver.SpreadDefaults{}},
		{"all disabled", "profiles:\n- plugins: {multiPoint: {disabled: [{name: '*'}]}}\n" + list, solver.SpreadDefaults{}},
		{"all disabled, enabled again", "profiles:\n- plugins: {multiPoint: {disabled: [{name: '*'}], enabled: [{name: PodTopologySpread}]}, score: {disabled: [{name: PodTopologySpread}]}}\n" + list,
			solver.SpreadDefaults{"default-scheduler": {zone}}},
		{"score disabled", "profiles:\n- plugins: {score: {disabled: [{name: PodTopologySpread}]}}\n" + list, solver.SpreadDefaults{"default-scheduler": {zone}}},
	} {
		sd, err := Parse([]byte(head + c.body))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(sd, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, sd, c.want)
		}
	}
}

// What kube-scheduler refuses to start with is an error naming the field.
func TestParseRejectsWhatKubeSchedulerRejects(t *testing.T) {
	const head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	args := func(a string) string {
		return head + "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: " + a + "\n"
	}
	for _, c := range []struct{ name, y, want string }{
		{"old version", "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n", `apiVersion "kubescheduler.config.k8s.io/v1beta3"`},
		{"unknown field", head + "profilez: []\n", `unknown field "profilez"`},
		{"System with constraints", args("{defaultConstraints: [{maxSkew: 1, topologyKey: a, whenUnsatisfiable: DoNotSchedule}]}"),
			`profiles[0]: pluginConfig PodTopologySpread: defaultingType: Invalid value: "System": when .defaultConstraints are not empty`},
		{"bad type", args("{defaultingType: Sometimes}"), `defaultingType: Unsupported value: "Sometimes"`},
		{"zero skew", args("{defaultingType: List, defaultConstraints: [{maxSkew: 0, topologyKey: a, whenUnsatisfiable: DoNotSchedule}]}"),
			"defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"},
		{"selector", args("{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: a, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: x}}}]}"),
			"defaultConstraints[0].labelSelector: Forbidden"},
		{"bad action", args("{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: a, whenUnsatisfiable: Never}]}"),
			`defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Never"`},
		{"repeated", args("{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: a, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 2, topologyKey: a, whenUnsatisfiable: DoNotSchedule}]}"),
			"defaultConstraints[1]: Duplicate value: {a, DoNotSchedule}"},
		{"unknown arg", args("{defaultingType: List, defaultConstraintz: []}"), `unknown field "defaultConstraintz"`},
		{"unnamed profiles", head + "profiles: [{}, {schedulerName: b}]\n", "profiles[0]: schedulerName: Required value"},
		{"args twice", head + "profiles:\n- pluginConfig: [{name: PodTopologySpread}, {name: PodTopologySpread}]\n", "profiles[0]: pluginConfig PodTopologySpread: listed twice"},
		{"same name", head + "profiles: [{schedulerName: a}, {schedulerName: a}]\n", `profiles[1].schedulerName: Duplicate value: "a"`},
	} {
		_, err := Parse([]byte(c.y))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// Load names the file in its errors.
func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scheduler.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: ConfigMap\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), "scheduler config "+path+": apiVersion \"v1\"") {
		t.Errorf("error %v", err)
	}
}
