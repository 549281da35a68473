package sharedstate

import (
	"reflect"
	"testing"
)

func TestNodeMemoryRoundTrip(t *testing.T) {
	k, v, ok := NodeMemoryEntry("m5.large_ami-0abc", 8227127296)
	if !ok || k != "m5.large_ami-0abc" || v != "8227127296" {
		t.Fatalf("entry %q %q %v", k, v, ok)
	}
	for _, bad := range []string{"m5.large", "_ami-0abc", "m5.large_", "m5 large_ami-0abc"} {
		if _, _, ok := NodeMemoryEntry(bad, 1); ok {
			t.Errorf("key %q accepted", bad)
		}
	}
	got, bad := DecodeNodeMemory(map[string]string{k: v, "m6g.large_ami-1": "x", "junk": "5", "c7i.large_ami-2": "-1"})
	if !reflect.DeepEqual(got, map[string]int64{k: 8227127296}) || !reflect.DeepEqual(bad, []string{"c7i.large_ami-2", "junk", "m6g.large_ami-1"}) {
		t.Errorf("decoded %v, bad %v", got, bad)
	}
}
