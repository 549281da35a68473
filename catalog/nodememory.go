package catalog

import (
	"sync"

	apiv1 "github.com/joinery/joinery/api/v1"
)

// nodeMemory is the memory capacity registered nodes reported, by
// instance type and image (Karpenter's discovered capacity cache): the
// smallest seen, since a plan that overestimates a node strands pods.
type nodeMemory struct {
	mu      sync.RWMutex
	learned map[string]int64 // NodeMemoryKey -> bytes
	onLearn func(key string, bytes int64)
}

// NodeMemoryKey names a type booted from an image.
func NodeMemoryKey(instanceType, imageID string) string { return instanceType + "_" + imageID }

// LearnNodeMemory records what a registered node of instanceType booted
// from imageID reports as memory capacity, reporting whether it lowered
// (or first set) what the Market knew; OnLearnNodeMemory's function is
// called when it did. Nil-safe.
func (m *Market) LearnNodeMemory(instanceType, imageID string, bytes int64) bool {
	if m == nil || bytes <= 0 || instanceType == "" || imageID == "" {
		return false
	}
	key := NodeMemoryKey(instanceType, imageID)
	if !m.memory.merge(key, bytes) {
		return false
	}
	m.memory.mu.RLock()
	fn := m.memory.onLearn
	m.memory.mu.RUnlock()
	if fn != nil {
		fn(key, bytes)
	}
	return true
}

// MergeNodeMemory takes what other replicas learned (NodeMemoryKey ->
// bytes), keeping the smaller of each. Nil-safe.
func (m *Market) MergeNodeMemory(in map[string]int64) {
	if m == nil {
		return
	}
	for k, b := range in {
		m.memory.merge(k, b)
	}
}

// OnLearnNodeMemory sets the function told of each lowered value (to share it).
func (m *Market) OnLearnNodeMemory(fn func(key string, bytes int64)) {
	m.memory.mu.Lock()
	m.memory.onLearn = fn
	m.memory.mu.Unlock()
}

// NodeMemory is the smallest memory capacity learned for instanceType on
// any of images. Nil-safe.
func (m *Market) NodeMemory(instanceType string, images []string) (int64, bool) {
	if m == nil {
		return 0, false
	}
	m.memory.mu.RLock()
	defer m.memory.mu.RUnlock()
	var out int64
	found := false
	for _, im := range images {
		if b, ok := m.memory.learned[NodeMemoryKey(instanceType, im)]; ok && (!found || b < out) {
			out, found = b, true
		}
	}
	return out, found
}

// LaunchOf is catalog.LaunchOf for a NodeClass (nil: EKS defaults) with
// the memory its nodes reported on the images it resolves to.
func (m *Market) LaunchOf(cls *apiv1.EC2NodeClass) Launch {
	if cls == nil {
		return LaunchOf(nil)
	}
	l := LaunchOf(&cls.Spec)
	if m == nil || len(cls.Status.AMIs) == 0 {
		return l
	}
	images := make([]string, 0, len(cls.Status.AMIs))
	for _, a := range cls.Status.AMIs {
		images = append(images, a.ID)
	}
	l.NodeMemory = func(instanceType string) (int64, bool) { return m.NodeMemory(instanceType, images) }
	return l
}

func (n *nodeMemory) merge(key string, bytes int64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if cur, ok := n.learned[key]; ok && cur <= bytes {
		return false
	}
	if n.learned == nil {
		n.learned = map[string]int64{}
	}
	n.learned[key] = bytes
	return true
}
