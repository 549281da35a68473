package sharedstate

import (
	"sort"
	"strconv"
	"strings"
)

// NodeMemoryConfigMap holds the memory capacity registered nodes reported:
// one key per <instance-type>_<image-id> (catalog.NodeMemoryKey), whose
// value is the smallest capacity in bytes a node of that type booted from
// that image reported. Replicas merge by keeping the smaller.
const NodeMemoryConfigMap = "joinery-node-memory"

// NodeMemoryEntry is the data key and value of a learned node memory; ok
// is false when the key would not be a ConfigMap key.
func NodeMemoryEntry(key string, bytes int64) (k, v string, ok bool) {
	typ, image, found := strings.Cut(key, "_")
	if !found || typ == "" || image == "" || !validKeyPart(typ) || !validKeyPart(image) || bytes <= 0 {
		return "", "", false
	}
	return key, strconv.FormatInt(bytes, 10), true
}

// DecodeNodeMemory reads the ConfigMap's data: key -> bytes. Entries that
// do not parse are skipped and returned in bad.
func DecodeNodeMemory(data map[string]string) (learned map[string]int64, bad []string) {
	learned = make(map[string]int64, len(data))
	for k, v := range data {
		b, err := strconv.ParseInt(v, 10, 64)
		if _, _, ok := NodeMemoryEntry(k, b); !ok || err != nil {
			bad = append(bad, k)
			continue
		}
		learned[k] = b
	}
	sort.Strings(bad)
	return learned, bad
}
