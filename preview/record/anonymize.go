package record

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// factLabels are label keys whose values are facts of the cloud, not
// names of the source (an instance type, a zone): kept, so a replay plans
// the same capacity.
var factLabels = map[string]bool{
	apiv1.LabelArch: true, apiv1.LabelOS: true, apiv1.LabelInstanceType: true, apiv1.LabelZone: true,
	apiv1.LabelRegion: true, apiv1.LabelCapacityType: true, apiv1.LabelWindowsBuild: true,
	"beta.kubernetes.io/arch": true, "beta.kubernetes.io/os": true, "beta.kubernetes.io/instance-type": true,
	"failure-domain.beta.kubernetes.io/zone": true, "failure-domain.beta.kubernetes.io/region": true,
	"eks.amazonaws.com/capacityType": true, "topology.ebs.csi.aws.com/zone": true,
}

func isFactLabel(key string) bool {
	return factLabels[key] || strings.HasPrefix(key, "karpenter.k8s.aws/instance-")
}

// Anonymize replaces, everywhere in r, every string that names something
// of the source: object names and namespaces, owners' names, uids, and
// label values (but those of factLabels), each by its salted hash (the
// same string always by the same hash, so selectors, owners and node
// names still match). Label keys, resource quantities and the cloud's
// facts are kept.
func Anonymize(r *Recording, salt string) {
	names, facts := map[string]bool{}, map[string]bool{}
	collect := func(obj map[string]any) { collectNames(obj, names, facts) }
	for _, o := range r.Objects {
		collect(o.Object)
	}
	for _, e := range r.Events {
		collect(e.Object)
	}
	for f := range facts {
		delete(names, f) // a fact shared by a name stays: the replay needs it
	}
	for n := range names {
		if !nameLike(n) {
			delete(names, n) // "1", "true", "500m": a quantity or a flag, not a name
		}
	}
	h := func(s string) string {
		sum := sha256.Sum256([]byte(salt + "\x00" + s))
		return "a" + hex.EncodeToString(sum[:6])
	}
	for i := range r.Objects {
		r.Objects[i].Object = replaceNames(r.Objects[i].Object, names, h).(map[string]any)
	}
	for i := range r.Events {
		r.Events[i].Object = replaceNames(r.Events[i].Object, names, h).(map[string]any)
	}
	for i := range r.Skipped {
		if r.Skipped[i].Name != "" {
			r.Skipped[i].Name = h(r.Skipped[i].Name)
		}
	}
	r.Anonymized = true
}

// collectNames adds the names in obj's metadata (and its pod template's)
// to names, and the values of fact labels to facts.
func collectNames(obj map[string]any, names, facts map[string]bool) {
	md, _ := obj["metadata"].(map[string]any)
	for _, f := range []string{"name", "namespace", "uid"} {
		if s, ok := md[f].(string); ok && s != "" {
			names[s] = true
		}
	}
	if refs, ok := md["ownerReferences"].([]any); ok {
		for _, ref := range refs {
			if m, ok := ref.(map[string]any); ok {
				for _, f := range []string{"name", "uid"} {
					if s, ok := m[f].(string); ok && s != "" {
						names[s] = true
					}
				}
			}
		}
	}
	if labels, ok := md["labels"].(map[string]any); ok {
		for k, v := range labels {
			s, ok := v.(string)
			switch {
			case !ok || s == "":
			case isFactLabel(k):
				facts[s] = true
			default:
				names[s] = true
			}
		}
	}
	for _, ref := range referenceNames(obj) {
		names[ref] = true
	}
	if t, ok := lookup(obj, []string{"spec", "template"}); ok {
		if tm, ok := t.(map[string]any); ok {
			collectNames(tm, names, facts)
		}
	}
}

// replaceNames walks v and hashes every string in names (map keys, which
// are label keys and resource names, are kept).
func replaceNames(v any, names map[string]bool, h func(string) string) any {
	switch x := v.(type) {
	case string:
		if names[x] {
			return h(x)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = replaceNames(e, names, h)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = replaceNames(e, names, h)
		}
		return x
	}
	return v
}

// referenceNames are the names obj's spec gives of other objects, which
// the recording may not hold (a claim, a priority class, a node).
func referenceNames(obj map[string]any) []string {
	var out []string
	add := func(v any, ok bool) {
		if s, isStr := v.(string); ok && isStr && s != "" {
			out = append(out, s)
		}
	}
	add(lookup(obj, []string{"spec", "nodeName"}))
	add(lookup(obj, []string{"spec", "priorityClassName"}))
	add(lookup(obj, []string{"spec", "claimRef", "name"}))
	add(lookup(obj, []string{"spec", "claimRef", "namespace"}))
	if vs, ok := lookup(obj, []string{"spec", "volumes"}); ok {
		list, _ := vs.([]any)
		for _, v := range list {
			if vm, ok := v.(map[string]any); ok {
				add(lookup(vm, []string{"persistentVolumeClaim", "claimName"}))
			}
		}
	}
	return out
}

// nameLike: a string that may be a name rather than a number, a quantity
// or a boolean, which a label value can equal but a replay must keep
// (a pod's "cpu: 1" request beside a label "replicas: 1").
func nameLike(s string) bool {
	if s == "true" || s == "false" {
		return false
	}
	_, err := resource.ParseQuantity(s)
	return err != nil
}
