package ec2

// snapshots returns snap of each of ps, in order (nil for none): what the
// exported listings (Instances, LaunchTemplates, Images) hand out.
func snapshots[P, S any](ps []P, snap func(P) S) []S {
	var out []S
	for _, p := range ps {
		out = append(out, snap(p))
	}
	return out
}

// snapshotOf returns snap of m[id], or the zero S and false if m has none.
func snapshotOf[P, S any](m map[string]P, id string, snap func(P) S) (S, bool) {
	p, ok := m[id]
	if !ok {
		var zero S
		return zero, false
	}
	return snap(p), true
}

// clonePtr returns a copy of *p, or nil for nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
