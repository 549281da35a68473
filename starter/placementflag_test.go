package main

import (
	"reflect"
	"testing"

	"github.com/joinery/joinery/sim/ec2"
)

// --placement-group takes NAME=STRATEGY and NAME=partition:COUNT.
func TestParsePlacementGroups(t *testing.T) {
	got, err := parsePlacementGroups([]string{"hpc=cluster", "kafka=partition:3", "etcd=spread"})
	want := []ec2.PlacementGroup{{Name: "hpc", Strategy: "cluster"}, {Name: "kafka", Strategy: "partition", PartitionCount: 3}, {Name: "etcd", Strategy: "spread"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v", got, err)
	}
	for _, bad := range []string{"hpc", "=cluster", "kafka=partition:x"} {
		if _, err := parsePlacementGroups([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
