package ec2

import "testing"

// A /28 is delegated only from a block wholly free: none of its addresses
// reserved, handed out or in another prefix. A subnet whose free addresses
// are scattered has room for single addresses but no prefix
// (fragmentation), and single addresses skip delegated blocks.
func TestPrefixesComeFromWholeFreeBlocks(t *testing.T) {
	sn := &subnet{id: "subnet-1", octet: 0, prefix: 26, size: 64, next: 4}
	// Block 0 holds the reserved .0-.3, block 3 the reserved .63.
	p1, ok := sn.allocatePrefix()
	p2, ok2 := sn.allocatePrefix()
	if !ok || !ok2 || p1 != "10.0.0.16/28" || p2 != "10.0.0.32/28" {
		t.Fatalf("prefixes %q %q", p1, p2)
	}
	if _, ok := sn.allocatePrefix(); ok {
		t.Fatal("a third prefix from a /26 (blocks 0 and 3 hold reserved addresses)")
	}
	var singles []string
	for range 12 { // .4-.15 fill block 0; the next one skips the prefixes to .48
		ip, err := sn.allocate()
		if err != nil {
			t.Fatal(err)
		}
		singles = append(singles, ip)
	}
	if ip, _ := sn.allocate(); ip != "10.0.0.48" {
		t.Errorf("single after the prefixes: %s, want 10.0.0.48", ip)
	}
	sn.releasePrefix(p1)
	for i, ip := range singles {
		if i%2 == 0 {
			sn.release(ip)
		}
	}
	// Block 1 is whole again; block 0 has six scattered free addresses.
	if p, ok := sn.allocatePrefix(); !ok || p != p1 {
		t.Errorf("released block not delegated again: %q", p)
	}
	if free := sn.available(); free < 6 {
		t.Fatalf("available %d", free)
	}
	if _, ok := sn.allocatePrefix(); ok {
		t.Error("prefix delegated from scattered free addresses")
	}
	if _, err := assignPrefixes(sn, 1); err == nil || err.(*apiError).Code != CodeInsufficientCidrBlocks {
		t.Errorf("assign on a fragmented subnet: %v", err)
	}
}
