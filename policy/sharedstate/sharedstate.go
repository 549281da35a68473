// Package sharedstate is the pure part of the state every worker replica
// must share and that must outlive every worker: the insufficient-capacity
// (ICE) cache and the pending-pod memo, each kept in one ConfigMap of the
// worker's namespace (written by cluster.StateStore, read through an
// informer). This package encodes and decodes their data keys, merges what
// replicas wrote, and says which keys have expired; it does no I/O.
//
// Both encodings are merge-friendly, so replicas add to a ConfigMap with a
// JSON merge patch and never need a read-modify-write:
//
//   - ICE cache (joinery-offering-cache): one key per offering,
//     <instance-type>_<zone>_<capacity-type>, whose value is the time the
//     offering becomes available again (RFC 3339, UTC). Replicas merge by
//     keeping the later time.
//   - Pod memo (joinery-pod-memo): one key per plan outcome,
//     <kind>.<unix-ms>.<writer>, whose value is the space-separated UIDs of
//     the pods it concerns; kind u is "the solver found no place for
//     these", e is "a plan placed these on existing nodes". Keys are never
//     rewritten, so adding and expiring them cannot lose a concurrent write.
//     The key "forget" holds the unix-ms time before which every entry is
//     void (a NodePool's spec changed).
package sharedstate

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ConfigMap names and the label that selects them for the informer.
const (
	OfferingCacheConfigMap = "joinery-offering-cache"
	PodMemoConfigMap       = "joinery-pod-memo"
	Label                  = "joinery.sh/shared-state"
)

// Offering is an (instance type, zone, capacity type) triple.
type Offering struct{ InstanceType, Zone, CapacityType string }

// OfferingKey is the ConfigMap data key of an offering; ok is false when a
// part is empty or holds the separator (or a character a ConfigMap key
// cannot hold), so the key would not decode back.
func OfferingKey(o Offering) (key string, ok bool) {
	for _, p := range []string{o.InstanceType, o.Zone, o.CapacityType} {
		if p == "" || !validKeyPart(p) {
			return "", false
		}
	}
	return o.InstanceType + "_" + o.Zone + "_" + o.CapacityType, true
}

// validKeyPart: ConfigMap keys are [-._a-zA-Z0-9]+; '_' separates parts.
func validKeyPart(s string) bool {
	for _, r := range s {
		if !(r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ParseOfferingKey is OfferingKey's inverse.
func ParseOfferingKey(key string) (Offering, bool) {
	p := strings.Split(key, "_")
	if len(p) != 3 || p[0] == "" || p[1] == "" || p[2] == "" {
		return Offering{}, false
	}
	return Offering{p[0], p[1], p[2]}, true
}

// FormatTime and ParseTime are the value encoding of the ICE cache.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseTime parses FormatTime's output.
func ParseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// DecodeOfferings reads an ICE cache ConfigMap's data: offering -> until.
// Keys or values that do not parse are skipped (someone edited the map by
// hand); they are returned in bad so the writer can remove them.
func DecodeOfferings(data map[string]string) (until map[Offering]time.Time, bad []string) {
	until = make(map[Offering]time.Time, len(data))
	for k, v := range data {
		o, ok := ParseOfferingKey(k)
		t, tok := ParseTime(v)
		if !ok || !tok {
			bad = append(bad, k)
			continue
		}
		until[o] = t
	}
	sort.Strings(bad)
	return until, bad
}

// ExpiredOfferings lists the keys of data whose time is not after now, and
// keys that do not parse: what a writer may delete.
func ExpiredOfferings(data map[string]string, now time.Time) []string {
	until, out := DecodeOfferings(data)
	for o, t := range until {
		if !now.Before(t) {
			k, _ := OfferingKey(o)
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Pod memo kinds.
const (
	KindUnschedulable = "u"
	KindOnExisting    = "e"
	forgetKey         = "forget"
)

// MemoKey is the data key of one plan outcome.
func MemoKey(kind string, at time.Time, writer string) string {
	return kind + "." + strconv.FormatInt(at.UnixMilli(), 10) + "." + writer
}

// parseMemoKey returns a memo key's kind and time.
func parseMemoKey(key string) (kind string, at time.Time, ok bool) {
	p := strings.SplitN(key, ".", 3)
	if len(p) != 3 || (p[0] != KindUnschedulable && p[0] != KindOnExisting) || p[2] == "" {
		return "", time.Time{}, false
	}
	ms, err := strconv.ParseInt(p[1], 10, 64)
	if err != nil {
		return "", time.Time{}, false
	}
	return p[0], time.UnixMilli(ms), true
}

// PodMemo is the pending-pod memo as one replica sees it: its own records
// merged with every replica's (Merge). It is safe for concurrent use; the
// zero value is empty and ready.
type PodMemo struct {
	mu     sync.Mutex
	groups map[string]memoGroup // by data key
	forget time.Time
	index  map[string]map[string]time.Time // kind -> uid -> latest at
}

type memoGroup struct {
	kind string
	at   time.Time
	uids []string
}

// Record adds one plan outcome and returns the data key and value to write.
// No uids: nothing is recorded ("" key).
func (m *PodMemo) Record(kind string, uids []string, at time.Time, writer string) (key, value string) {
	if len(uids) == 0 {
		return "", ""
	}
	key = MemoKey(kind, at, writer)
	value = strings.Join(uids, " ")
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addLocked(key, memoGroup{kind: kind, at: time.UnixMilli(at.UnixMilli()), uids: append([]string(nil), uids...)})
	return key, value
}

// Forget voids every entry recorded before at, and returns the data key
// and value to write.
func (m *PodMemo) Forget(at time.Time) (key, value string) {
	at = time.UnixMilli(at.UnixMilli())
	m.mu.Lock()
	if at.After(m.forget) {
		m.forget = at
	}
	m.mu.Unlock()
	return forgetKey, strconv.FormatInt(at.UnixMilli(), 10)
}

// Merge adds what a ConfigMap holds (every replica's records). Entries are
// only ever added here: expiry removes them (Expire), never a merge.
func (m *PodMemo) Merge(data map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range data {
		if k == forgetKey {
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil && time.UnixMilli(ms).After(m.forget) {
				m.forget = time.UnixMilli(ms)
			}
			continue
		}
		if _, ok := m.groups[k]; ok {
			continue
		}
		kind, at, ok := parseMemoKey(k)
		if !ok {
			continue
		}
		m.addLocked(k, memoGroup{kind: kind, at: at, uids: strings.Fields(v)})
	}
}

func (m *PodMemo) addLocked(key string, g memoGroup) {
	if m.groups == nil {
		m.groups = map[string]memoGroup{}
		m.index = map[string]map[string]time.Time{}
	}
	m.groups[key] = g
	m.indexLocked(g)
}

// indexLocked notes g's time for each of its pods where it is the latest.
func (m *PodMemo) indexLocked(g memoGroup) {
	idx := m.index[g.kind]
	if idx == nil {
		idx = map[string]time.Time{}
		m.index[g.kind] = idx
	}
	for _, u := range g.uids {
		if g.at.After(idx[u]) {
			idx[u] = g.at
		}
	}
}

// Lookup returns when a plan last recorded the pod under kind (ok false:
// never, or only before the last Forget).
func (m *PodMemo) Lookup(kind, uid string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.index[kind][uid]
	if !ok || at.Before(m.forget) {
		return time.Time{}, false
	}
	return at, true
}

// Expire drops the groups older than their kind's retention at now (and
// those before the last Forget) and returns their data keys, which a
// writer may delete from the ConfigMap: groups are never rewritten, so
// deleting an expired one cannot lose anything.
func (m *PodMemo) Expire(now time.Time, retention map[string]time.Duration) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k, g := range m.groups {
		if now.Sub(g.at) >= retention[g.kind] || g.at.Before(m.forget) {
			delete(m.groups, k)
			out = append(out, k)
		}
	}
	if len(out) > 0 {
		m.index = map[string]map[string]time.Time{}
		for _, g := range m.groups {
			m.indexLocked(g)
		}
	}
	sort.Strings(out)
	return out
}

// ExpiredMemo lists the keys of a memo ConfigMap's data that have expired at
// now (or do not parse): what a writer may delete.
func ExpiredMemo(data map[string]string, now time.Time, retention map[string]time.Duration) []string {
	var forget time.Time
	if ms, err := strconv.ParseInt(data[forgetKey], 10, 64); err == nil {
		forget = time.UnixMilli(ms)
	}
	var out []string
	for k := range data {
		if k == forgetKey {
			continue
		}
		kind, at, ok := parseMemoKey(k)
		if !ok || now.Sub(at) >= retention[kind] || at.Before(forget) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
