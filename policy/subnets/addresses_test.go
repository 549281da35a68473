package subnets

import "testing"

func TestNodeAddresses(t *testing.T) {
	cases := []struct {
		name               string
		enis, perENI, pods int
		want               int
	}{
		{"t3.small idle: one ENI of 4", 3, 4, 0, 4},
		{"t3.small 5 pods: 3 ENIs", 3, 4, 5, 12},
		{"t3.small 9 pods: capped at 3 ENIs", 3, 4, 9, 12},
		{"m5.large idle draws 10", 3, 10, 0, 10},
		{"m5.large first pod: 20", 3, 10, 1, 20},
		{"m5.large 9 pods still 2 ENIs", 3, 10, 9, 20},
		{"m5.large 10 pods: the third ENI", 3, 10, 10, 30},
		{"p3dn.24xlarge 3 pods: 2 ENIs of 50", 15, 50, 3, 100},
		{"no ENI data: the primary address", 0, 0, 4, 1},
		{"negative pods count as none", 3, 10, -2, 10},
	}
	for _, c := range cases {
		if got := NodeAddresses(c.enis, c.perENI, c.pods); got != c.want {
			t.Errorf("%s: NodeAddresses(%d, %d, %d) = %d, want %d", c.name, c.enis, c.perENI, c.pods, got, c.want)
		}
	}
}

func TestPickPerZone(t *testing.T) {
	got := PickPerZone([]Subnet{
		{ID: "subnet-b", Zone: "a", Free: 40}, {ID: "subnet-a", Zone: "a", Free: 40}, {ID: "subnet-c", Zone: "a", Free: 12},
		{ID: "subnet-d", Zone: "b", Free: 3}, {ID: "subnet-e", Zone: "b", Free: 300},
	})
	if len(got) != 2 || got["a"].ID != "subnet-a" || got["b"].ID != "subnet-e" || got["b"].Free != 300 {
		t.Errorf("PickPerZone = %+v, want subnet-a (tie on 40, lower id) and subnet-e", got)
	}
	if Holds(19, 20) || !Holds(20, 20) {
		t.Error("Holds: a subnet holds a node exactly when its free addresses cover the need")
	}
}

// Each prefix the class has EC2 delegate at launch takes a /28 (16
// addresses) of the subnet; none or 0 take nothing.
func TestPrefixAddresses(t *testing.T) {
	zero, two := int32(0), int32(2)
	for _, tc := range []struct {
		count *int32
		want  int
	}{{nil, 0}, {&zero, 0}, {&two, 32}} {
		if got := PrefixAddresses(tc.count); got != tc.want {
			t.Errorf("PrefixAddresses(%v) = %d, want %d", tc.count, got, tc.want)
		}
	}
}
