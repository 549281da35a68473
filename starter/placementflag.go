package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/joinery/joinery/sim/ec2"
)

// parsePlacementGroups reads --placement-group values, NAME=STRATEGY or
// NAME=partition:COUNT, into the local EC2's groups (EC2 checks the rest).
func parsePlacementGroups(vals []string) ([]ec2.PlacementGroup, error) {
	var out []ec2.PlacementGroup
	for _, v := range vals {
		name, spec, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--placement-group %q: want NAME=STRATEGY (cluster, spread, partition[:COUNT])", v)
		}
		g := ec2.PlacementGroup{Name: name, Strategy: spec}
		if s, count, has := strings.Cut(spec, ":"); has {
			n, err := strconv.Atoi(count)
			if err != nil {
				return nil, fmt.Errorf("--placement-group %q: partition count %q is not a number", v, count)
			}
			g.Strategy, g.PartitionCount = s, n
		}
		out = append(out, g)
	}
	return out, nil
}
