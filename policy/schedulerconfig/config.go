// Package schedulerconfig reads a kube-scheduler configuration file
// (KubeSchedulerConfiguration, kubescheduler.config.k8s.io/v1) for what
// Joinery's plans must agree with: each profile's default topology spread
// constraints (the PodTopologySpread plugin's defaultConstraints and
// defaultingType). Without them Joinery packs pods that kube-scheduler then
// refuses to put together, and they stay pending.
package schedulerconfig

import (
	"errors"
	"fmt"
	"os"

	"github.com/joinery/joinery/solver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"
)

// pluginName is the plugin whose arguments hold the defaults.
const pluginName = "PodTopologySpread"

// Load reads and parses a KubeSchedulerConfiguration file (Parse).
func Load(path string) (solver.SpreadDefaults, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	sd, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	return sd, nil
}

// Parse decodes a KubeSchedulerConfiguration (strictly: an unknown field
// is an error, as kube-scheduler makes it) and returns the default spread
// constraints of each profile, by schedulerName, as kube-scheduler defaults
// and validates them: no profiles is one default-scheduler profile, a
// single profile without a name is default-scheduler, PodTopologySpread
// without args or without defaultingType is System (node maxSkew 3, zone
// maxSkew 5, ScheduleAnyway), List uses defaultConstraints. A profile that
// disables the plugin's filter (or score) keeps none of the DoNotSchedule
// (ScheduleAnyway) defaults.
func Parse(data []byte) (solver.SpreadDefaults, error) {
	var cfg configv1.KubeSchedulerConfiguration
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, err
	}
	if gv := configv1.SchemeGroupVersion.String(); cfg.APIVersion != gv || cfg.Kind != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("apiVersion %q, kind %q: want %s KubeSchedulerConfiguration", cfg.APIVersion, cfg.Kind, gv)
	}
	profiles := cfg.Profiles
	if len(profiles) == 0 {
		profiles = []configv1.KubeSchedulerProfile{{}}
	}
	out := solver.SpreadDefaults{}
	for i := range profiles {
		name, cs, err := profileDefaults(&profiles[i], len(profiles) == 1)
		if err != nil {
			return nil, fmt.Errorf("profiles[%d]: %w", i, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("profiles[%d].schedulerName: Duplicate value: %q", i, name)
		}
		out[name] = cs
	}
	for name, cs := range out {
		if len(cs) == 0 {
			delete(out, name)
		}
	}
	return out, nil
}

// profileDefaults is a profile's scheduler name and default constraints.
func profileDefaults(p *configv1.KubeSchedulerProfile, only bool) (string, []corev1.TopologySpreadConstraint, error) {
	name := corev1.DefaultSchedulerName
	switch {
	case p.SchedulerName != nil && *p.SchedulerName != "":
		name = *p.SchedulerName
	case p.SchedulerName != nil || !only:
		return "", nil, fmt.Errorf("schedulerName: Required value")
	}
	args, err := spreadArgs(p.PluginConfig)
	if err != nil {
		return "", nil, fmt.Errorf("pluginConfig %s: %w", pluginName, err)
	}
	cs := args.DefaultConstraints
	if args.DefaultingType == configv1.SystemDefaulting {
		cs = solver.SystemSpreadDefaults()
	}
	filter, score := pluginPoints(p.Plugins)
	var kept []corev1.TopologySpreadConstraint
	for _, c := range cs {
		if (c.WhenUnsatisfiable == corev1.DoNotSchedule && filter) || (c.WhenUnsatisfiable == corev1.ScheduleAnyway && score) {
			kept = append(kept, c)
		}
	}
	return name, kept, nil
}

// spreadArgs are the profile's PodTopologySpread args, defaulted (System)
// and validated as kube-scheduler does.
func spreadArgs(pcs []configv1.PluginConfig) (configv1.PodTopologySpreadArgs, error) {
	var args configv1.PodTopologySpreadArgs
	seen := false
	for _, pc := range pcs {
		if pc.Name != pluginName {
			continue
		}
		if seen {
			return args, errors.New("listed twice")
		}
		seen = true
		if len(pc.Args.Raw) > 0 {
			if err := yaml.UnmarshalStrict(pc.Args.Raw, &args); err != nil {
				return args, fmt.Errorf("args: %w", err)
			}
		}
	}
	if args.DefaultingType == "" {
		args.DefaultingType = configv1.SystemDefaulting
	}
	return args, validateArgs(&args)
}

// validateArgs is kube-scheduler's ValidatePodTopologySpreadArgs.
func validateArgs(args *configv1.PodTopologySpreadArgs) error {
	switch args.DefaultingType {
	case configv1.SystemDefaulting:
		if len(args.DefaultConstraints) > 0 {
			return fmt.Errorf("defaultingType: Invalid value: %q: when .defaultConstraints are not empty", args.DefaultingType)
		}
	case configv1.ListDefaulting:
	default:
		return fmt.Errorf("defaultingType: Unsupported value: %q: supported values: \"System\", \"List\"", args.DefaultingType)
	}
	for i, c := range args.DefaultConstraints {
		if err := validateConstraint(c); err != nil {
			return fmt.Errorf("defaultConstraints[%d].%w", i, err)
		}
		for _, o := range args.DefaultConstraints[:i] {
			if o.TopologyKey == c.TopologyKey && o.WhenUnsatisfiable == c.WhenUnsatisfiable {
				return fmt.Errorf("defaultConstraints[%d]: Duplicate value: {%s, %s}", i, c.TopologyKey, c.WhenUnsatisfiable)
			}
		}
	}
	return nil
}

func validateConstraint(c corev1.TopologySpreadConstraint) error {
	switch {
	case c.MaxSkew <= 0:
		return fmt.Errorf("maxSkew: Invalid value: %d: not in valid range (0, inf)", c.MaxSkew)
	case c.TopologyKey == "":
		return fmt.Errorf("topologyKey: Required value: can not be empty")
	case len(validation.IsQualifiedName(c.TopologyKey)) > 0:
		return fmt.Errorf("topologyKey: Invalid value: %q: %s", c.TopologyKey, validation.IsQualifiedName(c.TopologyKey)[0])
	case c.WhenUnsatisfiable == "":
		return fmt.Errorf("whenUnsatisfiable: Required value: can not be empty")
	case c.WhenUnsatisfiable != corev1.DoNotSchedule && c.WhenUnsatisfiable != corev1.ScheduleAnyway:
		return fmt.Errorf("whenUnsatisfiable: Unsupported value: %q: supported values: \"DoNotSchedule\", \"ScheduleAnyway\"", c.WhenUnsatisfiable)
	case c.LabelSelector != nil:
		return fmt.Errorf("labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod")
	}
	return nil
}

// pluginPoints says whether PodTopologySpread runs as a filter and as a
// score plugin in a profile: it is a default multiPoint plugin, so it runs
// at both unless disabled (by name or "*") at multiPoint without being
// enabled again there, or disabled at the point itself; enabling it at a
// point always runs it there.
func pluginPoints(p *configv1.Plugins) (filter, score bool) {
	if p == nil {
		return true, true
	}
	multi := has(p.MultiPoint.Enabled) || !disables(p.MultiPoint)
	at := func(ps configv1.PluginSet) bool { return has(ps.Enabled) || (multi && !disables(ps)) }
	return at(p.Filter), at(p.Score)
}

func disables(ps configv1.PluginSet) bool {
	for _, d := range ps.Disabled {
		if d.Name == pluginName || d.Name == "*" {
			return true
		}
	}
	return false
}

func has(ps []configv1.Plugin) bool {
	for _, e := range ps {
		if e.Name == pluginName {
			return true
		}
	}
	return false
}
