package ec2

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// savedState is the on-disk form of the endpoint's instances, so a local
// world resumed from its state directory still knows what it launched.
type savedState struct {
	Seq        uint64          `json:"seq"`
	Instances  []savedInstance `json:"instances"`
	SubnetNext map[string]int  `json:"subnetNext"` // subnet id -> next host offset
	SubnetHeld map[string]int  `json:"subnetHeld,omitempty"`
	// Releases are the published EKS AMI releases (versions), oldest first.
	Releases []string `json:"releases,omitempty"`
	// CustomImages are AddImage's images; Deprecations the deprecation
	// times set on the release images.
	CustomImages    []Image              `json:"customImages,omitempty"`
	Deprecations    map[string]time.Time `json:"deprecations,omitempty"`
	LaunchTemplates []savedTemplate      `json:"launchTemplates,omitempty"`
	// CapacityReservations are AddCapacityReservation's, in creation order.
	CapacityReservations []savedReservation `json:"capacityReservations,omitempty"`
	// PlacementGroups are the groups, in creation order.
	PlacementGroups []savedPlacementGroup `json:"placementGroups,omitempty"`
	// Fleets are the CreateFleet answers by client token, kept
	// tokenRetention as EC2 keeps them: a retry after a restart gets the
	// first answer, not a second instance.
	Fleets map[string]savedFleet `json:"fleets,omitempty"`
}

type savedFleet struct {
	Hash     [32]byte            `json:"hash"`
	Response createFleetResponse `json:"response"`
	At       time.Time           `json:"at"`
}

// tokenRetention is how long a client token is remembered (EC2 documents
// at least 24 hours for RunInstances).
const tokenRetention = 24 * time.Hour

type savedReservation struct {
	CapacityReservation
	Seq uint64 `json:"seq"`
}

type savedPlacementGroup struct {
	PlacementGroup
	Seq uint64 `json:"seq"`
}

type savedTemplate struct {
	LaunchTemplate
	Seq uint64 `json:"seq"`
}

type savedInstance struct {
	Instance
	Seq         uint64 `json:"seq"`
	ClientToken string `json:"clientToken,omitempty"`
}

// SaveState writes every instance not yet terminated to path (JSON,
// written atomically).
func (s *Server) SaveState(path string) error {
	s.mu.Lock()
	st := savedState{Seq: s.seq, SubnetNext: map[string]int{}}
	for _, in := range s.sortedInstancesLocked() {
		if in.State == StateTerminated {
			continue
		}
		st.Instances = append(st.Instances, savedInstance{Instance: in.snapshot(), Seq: in.seq, ClientToken: in.clientToken})
	}
	st.SubnetHeld = map[string]int{}
	for _, sn := range s.subnets {
		st.SubnetNext[sn.id] = sn.next
		if sn.held > 0 {
			st.SubnetHeld[sn.id] = sn.held
		}
	}
	for _, r := range s.releases {
		st.Releases = append(st.Releases, r.Version)
	}
	custom := map[string]bool{}
	for _, id := range s.customImages {
		custom[id] = true
		st.CustomImages = append(st.CustomImages, cloneImage(*s.images[id]))
	}
	st.Deprecations = map[string]time.Time{}
	for id, im := range s.images {
		if !custom[id] && !im.DeprecationTime.IsZero() {
			st.Deprecations[id] = im.DeprecationTime
		}
	}
	for _, lt := range s.sortedTemplatesLocked() {
		st.LaunchTemplates = append(st.LaunchTemplates, savedTemplate{LaunchTemplate: lt.snapshot(), Seq: lt.seq})
	}
	for _, r := range s.sortedReservationsLocked() {
		st.CapacityReservations = append(st.CapacityReservations, savedReservation{CapacityReservation: r.CapacityReservation, Seq: r.seq})
	}
	for _, g := range s.sortedPlacementGroupsLocked() {
		st.PlacementGroups = append(st.PlacementGroups, savedPlacementGroup{PlacementGroup: g.snapshot(), Seq: g.seq})
	}
	st.Fleets = s.savedFleetsLocked()
	s.mu.Unlock()
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// LoadState restores instances saved by SaveState (a missing file is an
// empty world). Instances that were pending boot again; ones shutting down
// finish terminating. Call it before Start.
func (s *Server) LoadState(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var st savedState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("ec2 state %s is unreadable (%v): remove it or run with --fresh", path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Seq > s.seq {
		s.seq = st.Seq
	}
	for _, sn := range s.subnets {
		if n, ok := st.SubnetNext[sn.id]; ok && n > sn.next {
			sn.next = n
		}
		sn.held = st.SubnetHeld[sn.id]
	}
	have := map[string]bool{}
	for _, r := range s.releases {
		have[r.Version] = true
	}
	for _, v := range st.Releases {
		if !have[v] {
			if _, err := s.publishLocked(v); err != nil {
				return fmt.Errorf("ec2 state %s: %v: remove it or run with --fresh", path, err)
			}
		}
	}
	for _, im := range st.CustomImages {
		if _, dup := s.images[im.ID]; !dup {
			im := cloneImage(im)
			s.images[im.ID] = &im
			s.customImages = append(s.customImages, im.ID)
		}
	}
	for id, t := range st.Deprecations {
		if im, ok := s.images[id]; ok {
			im.DeprecationTime = t
		}
	}
	for _, lt := range st.LaunchTemplates {
		t := lt.LaunchTemplate.snapshot()
		t.seq = lt.Seq
		if t.Tags == nil {
			t.Tags = map[string]string{}
		}
		s.templates[t.ID] = &t
	}
	for _, r := range st.CapacityReservations {
		if s.reservations == nil {
			s.reservations = map[string]*reservation{}
		}
		s.reservations[r.ID] = &reservation{CapacityReservation: r.CapacityReservation, seq: r.Seq}
	}
	for _, g := range st.PlacementGroups {
		if s.placementGroups == nil {
			s.placementGroups = map[string]*placementGroup{}
		}
		s.placementGroups[g.ID] = &placementGroup{PlacementGroup: g.PlacementGroup, seq: g.Seq}
	}
	for token, f := range st.Fleets {
		s.fleets[token] = fleetRecord{hash: f.Hash, resp: f.Response, at: f.At}
	}
	for _, si := range st.Instances {
		in := &instance{Instance: si.Instance, seq: si.Seq, clientToken: si.ClientToken}
		if in.Tags == nil {
			in.Tags = map[string]string{}
		}
		s.instances[in.ID] = in
		if sn := s.subnetByID(in.SubnetID); sn != nil {
			sn.inUse += 1 + len(in.SecondaryIPs)
			for _, p := range in.IPv4Prefixes {
				if b, ok := sn.block(p); ok && !sn.blocks[b] {
					if sn.blocks == nil {
						sn.blocks = map[int]bool{}
					}
					sn.blocks[b] = true
					sn.inUse += prefixSize
				}
			}
		}
		switch in.State {
		case StatePending:
			s.bootLocked(in)
		case StateShuttingDown:
			s.finishShutdownLocked(in)
		}
		if in.State == StatePending || in.State == StateRunning {
			s.scheduleBlockEndLocked(in) // a block's end outlives a restart
		}
	}
	return nil
}

// savedFleetsLocked are the client tokens still remembered (older ones are
// forgotten).
func (s *Server) savedFleetsLocked() map[string]savedFleet {
	out := map[string]savedFleet{}
	for token, f := range s.fleets {
		if s.now().Sub(f.at) > tokenRetention {
			delete(s.fleets, token)
			continue
		}
		out[token] = savedFleet{Hash: f.hash, Response: f.resp, At: f.at}
	}
	return out
}
