package record

// keptAnnotations are the annotations that change what Joinery or
// Karpenter do with an object; every other annotation is dropped.
var keptAnnotations = map[string]bool{
	"karpenter.sh/do-not-disrupt":                    true,
	"cluster-autoscaler.kubernetes.io/safe-to-evict": true,
	"joinery.sh/limit-usd-per-hour":                  true,
}

// keptMetadata are the metadata fields a recording keeps.
var keptMetadata = []string{"name", "namespace", "uid", "labels", "ownerReferences", "creationTimestamp", "deletionTimestamp"}

// Trim is the object as recorded: its metadata (keptMetadata and
// keptAnnotations), the kind's Keep paths, and of every container only its
// name and resources (images, commands and environments never leave the
// cluster). A pod template is trimmed as a pod.
func (k Kind) Trim(obj map[string]any) map[string]any {
	out := map[string]any{"metadata": trimMetadata(obj["metadata"])}
	for _, path := range k.Keep {
		if v, ok := lookup(obj, path); ok {
			set(out, path, v)
		}
	}
	spec, _ := out["spec"].(map[string]any)
	switch {
	case spec == nil:
	case k.Name == "Pod":
		trimPodSpec(spec)
	case k.PodTemplate:
		if t, ok := spec["template"].(map[string]any); ok {
			spec["template"] = trimTemplate(t)
		}
	}
	return out
}

func trimMetadata(m any) map[string]any {
	in, _ := m.(map[string]any)
	out := map[string]any{}
	for _, f := range keptMetadata {
		if v, ok := in[f]; ok {
			out[f] = v
		}
	}
	if a, ok := in["annotations"].(map[string]any); ok {
		kept := map[string]any{}
		for k, v := range a {
			if keptAnnotations[k] {
				kept[k] = v
			}
		}
		if len(kept) > 0 {
			out["annotations"] = kept
		}
	}
	return out
}

// trimTemplate keeps a pod template's labels and scheduling fields.
func trimTemplate(t map[string]any) map[string]any {
	pod := Kinds[0] // Pod
	out := map[string]any{"metadata": trimMetadata(t["metadata"])}
	for _, path := range pod.Keep {
		if path[0] != "spec" {
			continue
		}
		if v, ok := lookup(t, path); ok {
			set(out, path, v)
		}
	}
	if spec, ok := out["spec"].(map[string]any); ok {
		trimPodSpec(spec)
	}
	return out
}

// trimPodSpec reduces containers to their names and resources, and
// volumes to the claims they mount.
func trimPodSpec(spec map[string]any) {
	for _, f := range []string{"containers", "initContainers"} {
		cs, ok := spec[f].([]any)
		if !ok {
			continue
		}
		out := make([]any, 0, len(cs))
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			kept := map[string]any{"name": cm["name"]}
			if r, ok := cm["resources"]; ok {
				kept["resources"] = r
			}
			if rp, ok := cm["restartPolicy"]; ok {
				kept["restartPolicy"] = rp // a sidecar's resources count as a container's
			}
			out = append(out, kept)
		}
		spec[f] = out
	}
	if vs, ok := spec["volumes"].([]any); ok {
		var out []any
		for _, v := range vs {
			vm, _ := v.(map[string]any)
			if pvc, ok := vm["persistentVolumeClaim"]; ok {
				out = append(out, map[string]any{"name": vm["name"], "persistentVolumeClaim": pvc})
			}
		}
		if len(out) == 0 {
			delete(spec, "volumes")
		} else {
			spec["volumes"] = out
		}
	}
}

func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func set(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}
