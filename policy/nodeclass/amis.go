package nodeclass

import (
	"sort"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Image is what DescribeImages says of one image.
type Image struct {
	ID, Name     string
	Architecture string // EC2's: x86_64 or arm64
	CreationDate string // RFC 3339, as EC2 returns it: compares as a string
	Deprecated   bool
}

// Candidate is an image with the variants it serves (none for images
// selected by id, name or tags: they serve every type of their arch).
type Candidate struct {
	Image    Image
	Variants []string
}

// archLabel maps EC2's architecture to kubernetes.io/arch ("" : unsupported).
func archLabel(ec2Arch string) string {
	switch ec2Arch {
	case "x86_64":
		return "amd64"
	case "arm64":
		return "arm64"
	}
	return ""
}

// SelectAMIs keeps one image per distinct requirement set (non-deprecated
// first, then the newest, then the larger name) and returns them newest
// first, ties by id: an instance type launches with the first it fits.
func SelectAMIs(cands []Candidate) []apiv1.AMIStatus {
	best := map[string]apiv1.AMIStatus{}
	bestImg := map[string]Image{}
	for _, c := range cands {
		arch := archLabel(c.Image.Architecture)
		if arch == "" {
			continue
		}
		variants := c.Variants
		if len(variants) == 0 {
			variants = []string{""}
		}
		for _, v := range variants {
			reqs := []corev1.NodeSelectorRequirement{{Key: apiv1.LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}
			if v != "" {
				reqs = append(reqs, VariantRequirements(v)...)
			}
			sortRequirements(reqs)
			key := requirementsKey(reqs)
			if old, ok := bestImg[key]; ok && !newer(c.Image, old) {
				continue
			}
			bestImg[key] = c.Image
			best[key] = apiv1.AMIStatus{ID: c.Image.ID, Name: c.Image.Name, Deprecated: c.Image.Deprecated, Requirements: reqs}
		}
	}
	out := make([]apiv1.AMIStatus, 0, len(best))
	keys := make([]string, 0, len(best))
	for k := range best {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := bestImg[keys[i]], bestImg[keys[j]]
		if a.CreationDate != b.CreationDate {
			return a.CreationDate > b.CreationDate
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		out = append(out, best[k])
	}
	return out
}

// newer reports whether a beats b for the same requirement set.
func newer(a, b Image) bool {
	if a.Deprecated != b.Deprecated {
		return !a.Deprecated
	}
	if a.CreationDate != b.CreationDate {
		return a.CreationDate > b.CreationDate
	}
	return a.Name > b.Name
}

// sortRequirements orders by key length, then key (Karpenter's status order).
func sortRequirements(r []corev1.NodeSelectorRequirement) {
	sort.Slice(r, func(i, j int) bool {
		if len(r[i].Key) != len(r[j].Key) {
			return len(r[i].Key) < len(r[j].Key)
		}
		return r[i].Key < r[j].Key
	})
}

func requirementsKey(r []corev1.NodeSelectorRequirement) string {
	var b strings.Builder
	for _, q := range r {
		b.WriteString(q.Key + " " + string(q.Operator) + " " + strings.Join(q.Values, ",") + ";")
	}
	return b.String()
}

// AMIFor returns the first image whose requirements an instance type's
// labels meet.
func AMIFor(amis []apiv1.AMIStatus, typeLabels map[string]string) (apiv1.AMIStatus, bool) {
	set := labels.Set(typeLabels)
	for _, a := range amis {
		if Matches(a.Requirements, set) {
			return a, true
		}
	}
	return apiv1.AMIStatus{}, false
}

// Matches reports whether labels meet every requirement.
func Matches(reqs []corev1.NodeSelectorRequirement, set labels.Set) bool {
	for _, r := range reqs {
		v, has := set[r.Key]
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			if !has || !contains(r.Values, v) {
				return false
			}
		case corev1.NodeSelectorOpNotIn:
			if has && contains(r.Values, v) {
				return false
			}
		case corev1.NodeSelectorOpExists:
			if !has {
				return false
			}
		case corev1.NodeSelectorOpDoesNotExist:
			if has {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
