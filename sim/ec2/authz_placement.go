package ec2

import "github.com/joinery/joinery/sim/awsauth"

// createPlacementGroupChecksLocked: ec2:CreatePlacementGroup on the new
// group (its ARN names it by name) with its tags and strategy, and
// ec2:CreateTags at its creation when it has tags, as the service
// authorization reference lists them.
func (s *Server) createPlacementGroupChecksLocked(f form) []awsauth.Check {
	tags := tagSpecs(f, "TagSpecification")["placement-group"]
	arn := s.arn("placement-group", f.get("GroupName"))
	out := []awsauth.Check{{Action: "ec2:CreatePlacementGroup", Resource: arn,
		Context: s.keys().RequestTags(tags).Set("ec2:PlacementGroupStrategy", f.get("Strategy")).Context()}}
	if len(tags) > 0 {
		out = append(out, awsauth.Check{Action: "ec2:CreateTags", Resource: arn,
			Context: s.keys().RequestTags(tags).Set("ec2:CreateAction", "CreatePlacementGroup").Context()})
	}
	return out
}

// deletePlacementGroupChecksLocked: ec2:DeletePlacementGroup on the group
// with its tags (an unknown one is left to the handler's Unknown).
func (s *Server) deletePlacementGroupChecksLocked(f form) []awsauth.Check {
	g := s.placementGroupLocked(f.get("GroupName"))
	if g == nil {
		return nil
	}
	return []awsauth.Check{{Action: "ec2:DeletePlacementGroup", Resource: s.arn("placement-group", g.Name),
		Context: s.keys().ResourceTags("ec2", g.Tags).Set("ec2:PlacementGroupStrategy", g.Strategy).Context()}}
}
