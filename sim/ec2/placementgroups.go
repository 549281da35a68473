package ec2

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
)

// Placement group strategies, error codes and limits as EC2 has them.
const (
	PlacementStrategyCluster   = "cluster"
	PlacementStrategyPartition = "partition"
	PlacementStrategySpread    = "spread"

	CodeInvalidPlacementGroupUnknown   = "InvalidPlacementGroup.Unknown"
	CodeInvalidPlacementGroupDuplicate = "InvalidPlacementGroup.Duplicate"
	CodeInvalidPlacementGroupInUse     = "InvalidPlacementGroup.InUse"

	// SpreadGroupZoneLimit is how many running instances a (rack) spread
	// group holds per Availability Zone.
	SpreadGroupZoneLimit = 7
	// MaxPartitions is a partition group's largest partition count.
	MaxPartitions = 7
)

// PlacementGroup is an EC2 placement group. Instances launched with its
// name or id in the launch template's Placement join it; the strategy's
// rules are enforced at launch (checkPlacementLocked, placementRoomLocked).
type PlacementGroup struct {
	ID       string // "pg-0" + 16 hex digits; AddPlacementGroup assigns it
	Name     string
	Strategy string // cluster, partition or spread
	// PartitionCount is a partition group's partitions (1..7; default 2).
	PartitionCount int
	// SpreadLevel is a spread group's "rack" (the default; "host" is
	// Outposts only and refused here).
	SpreadLevel string
	State       string // "available"
	Tags        map[string]string
}

type placementGroup struct {
	PlacementGroup
	seq uint64
}

// AddPlacementGroup creates a group as CreatePlacementGroup does (the
// world's seeding; the same checks and errors) and returns it with its id.
// Groups are kept by SaveState.
func (s *Server) AddPlacementGroup(g PlacementGroup) (PlacementGroup, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pg, err := s.createPlacementGroupLocked(g)
	if err != nil {
		return PlacementGroup{}, err
	}
	return pg.snapshot(), nil
}

// EnsurePlacementGroup returns the group named g.Name if there is one (a
// world resumed from its state directory), else adds g.
func (s *Server) EnsurePlacementGroup(g PlacementGroup) (PlacementGroup, error) {
	s.mu.Lock()
	if pg := s.placementGroupLocked(g.Name); pg != nil {
		defer s.mu.Unlock()
		return pg.snapshot(), nil
	}
	s.mu.Unlock()
	return s.AddPlacementGroup(g)
}

// PlacementGroups returns every group in creation order.
func (s *Server) PlacementGroups() []PlacementGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PlacementGroup
	for _, g := range s.sortedPlacementGroupsLocked() {
		out = append(out, g.snapshot())
	}
	return out
}

func (g *placementGroup) snapshot() PlacementGroup {
	out := g.PlacementGroup
	out.Tags = maps.Clone(g.Tags)
	return out
}

func (s *Server) sortedPlacementGroupsLocked() []*placementGroup {
	out := slices.Collect(maps.Values(s.placementGroups))
	slices.SortFunc(out, func(a, b *placementGroup) int { return int(a.seq) - int(b.seq) })
	return out
}

// placementGroupLocked finds a group by name or id (nil: none).
func (s *Server) placementGroupLocked(nameOrID string) *placementGroup {
	if g := s.placementGroups[nameOrID]; g != nil {
		return g
	}
	for _, g := range s.placementGroups {
		if g.Name == nameOrID {
			return g
		}
	}
	return nil
}

// createPlacementGroupLocked checks g as CreatePlacementGroup does and adds it.
func (s *Server) createPlacementGroupLocked(g PlacementGroup) (*placementGroup, error) {
	if g.Name == "" {
		return nil, missingParameter("groupName")
	}
	if len(g.Name) > 255 {
		return nil, invalidParameter("Value (%s) for parameter groupName is invalid. Length exceeds 255 characters.", g.Name)
	}
	if err := checkStrategy(&g); err != nil {
		return nil, err
	}
	if s.placementGroupLocked(g.Name) != nil {
		return nil, newError(http.StatusBadRequest, CodeInvalidPlacementGroupDuplicate, "The placement group '%s' already exists.", g.Name)
	}
	g.ID, g.State, g.Tags = s.resourceIDLocked("pg"), "available", maps.Clone(g.Tags)
	if s.placementGroups == nil {
		s.placementGroups = map[string]*placementGroup{}
	}
	s.seq++
	pg := &placementGroup{PlacementGroup: g, seq: s.seq}
	s.placementGroups[g.ID] = pg
	return pg, nil
}

// checkStrategy validates the strategy and its own parameters, filling in
// EC2's defaults (two partitions; rack spread level).
func checkStrategy(g *PlacementGroup) error {
	switch g.Strategy {
	case PlacementStrategyCluster, PlacementStrategySpread, PlacementStrategyPartition:
	case "":
		return missingParameter("strategy")
	default:
		return invalidParameter("Value (%s) for parameter strategy is invalid. Valid values are cluster, partition and spread.", g.Strategy)
	}
	if g.PartitionCount != 0 && g.Strategy != PlacementStrategyPartition {
		return newError(http.StatusBadRequest, CodeInvalidParameterCombination, "The parameter partitionCount is only valid with the partition strategy.")
	}
	if g.Strategy == PlacementStrategyPartition {
		if g.PartitionCount == 0 {
			g.PartitionCount = 2
		}
		if g.PartitionCount < 1 || g.PartitionCount > MaxPartitions {
			return invalidParameter("Value (%d) for parameter partitionCount is invalid. The partition count must be between 1 and %d.", g.PartitionCount, MaxPartitions)
		}
	}
	switch {
	case g.SpreadLevel != "" && g.Strategy != PlacementStrategySpread:
		return newError(http.StatusBadRequest, CodeInvalidParameterCombination, "The parameter spreadLevel is only valid with the spread strategy.")
	case g.SpreadLevel == "host":
		return invalidParameter("Host spread level placement groups are only available on AWS Outposts.")
	case g.SpreadLevel != "" && g.SpreadLevel != "rack":
		return invalidParameter("Value (%s) for parameter spreadLevel is invalid. Valid values are host and rack.", g.SpreadLevel)
	case g.Strategy == PlacementStrategySpread:
		g.SpreadLevel = "rack"
	}
	return nil
}

func (s *Server) createPlacementGroup(f form) (withRequestID, error) {
	g := PlacementGroup{Name: f.get("GroupName"), Strategy: f.get("Strategy"), SpreadLevel: f.get("SpreadLevel"),
		Tags: tagSpecs(f, "TagSpecification")["placement-group"]}
	if v := f.get("PartitionCount"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, invalidParameter("Invalid value '%s' for partitionCount", v)
		}
		g.PartitionCount = n
	}
	for rt := range tagSpecs(f, "TagSpecification") {
		if rt != "placement-group" {
			return nil, invalidParameter("'%s' is not a valid taggable resource type for this operation.", rt)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pg, err := s.createPlacementGroupLocked(g)
	if err != nil {
		return nil, err
	}
	return &createPlacementGroupResponse{PlacementGroup: s.placementGroupXML(pg)}, nil
}

var placementGroupFields = fields[*placementGroup]{
	"group-name":   func(g *placementGroup) []string { return []string{g.Name} },
	"group-id":     func(g *placementGroup) []string { return []string{g.ID} },
	"state":        func(g *placementGroup) []string { return []string{g.State} },
	"strategy":     func(g *placementGroup) []string { return []string{g.Strategy} },
	"spread-level": func(g *placementGroup) []string { return nonEmpty(g.SpreadLevel) },
}

// describePlacementGroups answers GroupName.N / GroupId.N (each must exist:
// InvalidPlacementGroup.Unknown) and the filters; EC2 does not page it.
func (s *Server) describePlacementGroups(f form) (withRequestID, error) {
	names, ids := f.strings("GroupName"), f.strings("GroupId")
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.sortedPlacementGroupsLocked()
	if len(names) > 0 || len(ids) > 0 {
		var picked []*placementGroup
		for _, want := range append(names, ids...) {
			g := s.placementGroupLocked(want)
			if g == nil || (slices.Contains(ids, want) && g.ID != want) || (slices.Contains(names, want) && g.Name != want) {
				return nil, unknownPlacementGroup(want)
			}
			if !slices.Contains(picked, g) {
				picked = append(picked, g)
			}
		}
		items = picked
	}
	items, err := applyFilters(items, f.filters(), placementGroupFields, func(g *placementGroup) map[string]string { return g.Tags })
	if err != nil {
		return nil, err
	}
	out := &describePlacementGroupsResponse{PlacementGroups: []placementGroupXML{}}
	for _, g := range items {
		out.PlacementGroups = append(out.PlacementGroups, s.placementGroupXML(g))
	}
	return out, nil
}

// deletePlacementGroup removes a group none of whose instances is left
// (InvalidPlacementGroup.InUse otherwise).
func (s *Server) deletePlacementGroup(f form) (withRequestID, error) {
	name := f.get("GroupName")
	if name == "" {
		return nil, missingParameter("groupName")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.placementGroupLocked(name)
	if g == nil || g.Name != name {
		return nil, unknownPlacementGroup(name)
	}
	if len(s.groupInstancesLocked(g, "")) > 0 {
		return nil, newError(http.StatusBadRequest, CodeInvalidPlacementGroupInUse, "The placement group '%s' is in use and may not be deleted.", name)
	}
	delete(s.placementGroups, g.ID)
	return &returnResponse{Return: true}, nil
}

func unknownPlacementGroup(nameOrID string) *apiError {
	return newError(http.StatusBadRequest, CodeInvalidPlacementGroupUnknown, "The Placement Group '%s' is unknown.", nameOrID)
}

// groupInstancesLocked are the group's instances not terminated, in zone
// (every zone when "").
func (s *Server) groupInstancesLocked(g *placementGroup, zone string) []*instance {
	var out []*instance
	for _, in := range s.instances {
		if in.PlacementGroupID == g.ID && in.State != StateTerminated && (zone == "" || in.Zone == zone) {
			out = append(out, in)
		}
	}
	return out
}

func (s *Server) placementGroupXML(g *placementGroup) placementGroupXML {
	x := placementGroupXML{GroupName: g.Name, GroupID: g.ID, State: g.State, Strategy: g.Strategy,
		SpreadLevel: g.SpreadLevel, Tags: tagSet(g.Tags), GroupArn: s.arn("placement-group", g.Name)}
	if g.Strategy == PlacementStrategyPartition {
		x.PartitionCount = g.PartitionCount
	}
	return x
}

type placementGroupXML struct {
	GroupName      string   `xml:"groupName"`
	State          string   `xml:"state"`
	Strategy       string   `xml:"strategy"`
	PartitionCount int      `xml:"partitionCount,omitempty"`
	GroupID        string   `xml:"groupId"`
	Tags           []tagXML `xml:"tagSet>item"`
	GroupArn       string   `xml:"groupArn"`
	SpreadLevel    string   `xml:"spreadLevel,omitempty"`
}

type createPlacementGroupResponse struct {
	meta
	PlacementGroup placementGroupXML `xml:"placementGroup"`
}

type describePlacementGroupsResponse struct {
	meta
	PlacementGroups []placementGroupXML `xml:"placementGroupSet>item"`
}

// clusterTypeUnsupported is EC2's refusal of a type cluster groups do not
// take (InvalidParameterCombination).
func clusterTypeUnsupported(instanceType string) string {
	return fmt.Sprintf("Cluster placement groups are not supported by the '%s' instance type. "+
		"Specify a supported instance type or change the placement group strategy, and try again.", instanceType)
}

// spreadLimitMessage is EC2's InsufficientInstanceCapacity message when a
// spread group is full in the zone (Karpenter matches on its wording).
const spreadLimitMessage = "You've reached the limit of instances in this spread placement group. " +
	"A spread placement group can have up to seven instances per Availability Zone."
