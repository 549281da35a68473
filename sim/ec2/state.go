package ec2

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// savedState is the on-disk form of the endpoint's instances, so a local
// world resumed from its state directory still knows what it launched.
type savedState struct {
	Seq        uint64          `json:"seq"`
	Instances  []savedInstance `json:"instances"`
	SubnetNext map[string]int  `json:"subnetNext"` // subnet id -> next host offset
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
	for _, sn := range s.subnets {
		st.SubnetNext[sn.id] = sn.next
	}
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
	}
	for _, si := range st.Instances {
		in := &instance{Instance: si.Instance, seq: si.Seq, clientToken: si.ClientToken}
		if in.Tags == nil {
			in.Tags = map[string]string{}
		}
		s.instances[in.ID] = in
		if sn := s.subnetByID(in.SubnetID); sn != nil {
			sn.inUse++
		}
		switch in.State {
		case StatePending:
			s.bootLocked(in)
		case StateShuttingDown:
			s.finishShutdownLocked(in)
		}
	}
	return nil
}
