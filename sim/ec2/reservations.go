package ec2

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"
)

// Capacity reservation error codes and launch-template preferences, as EC2
// spells them.
const (
	CodeReservationCapacityExceeded           = "ReservationCapacityExceeded"
	CodeInvalidCapacityReservationIDNotFound  = "InvalidCapacityReservationId.NotFound"
	CodeInvalidCapacityReservationIDMalformed = "InvalidCapacityReservationId.Malformed"

	// Reservation types and the instance lifecycles of their launches.
	ReservationTypeDefault       = "default"
	ReservationTypeCapacityBlock = "capacity-block"
	LifecycleCapacityBlock       = "capacity-block"
	LifecycleInterruptible       = "interruptible-capacity-reservation"

	PreferenceCapacityReservationsOnly = "capacity-reservations-only"
	PreferenceOpen                     = "open"
	PreferenceNone                     = "none"
)

// CapacityReservation is an On-Demand Capacity Reservation: TotalInstanceCount
// instances of InstanceType in Zone, paid for whether used or not. An
// instance launched into it counts against it until it is terminated.
type CapacityReservation struct {
	ID           string // "cr-0" + 16 hex digits; AddCapacityReservation assigns it
	InstanceType string
	Zone         string
	// TotalInstanceCount is the size of the reservation (>= 1).
	TotalInstanceCount int
	// InstanceMatchCriteria is "targeted" (only launches that name the
	// reservation use it; the default) or "open" (any matching on-demand
	// launch that does not opt out uses it).
	InstanceMatchCriteria string
	Tags                  map[string]string
	// OwnerID defaults to the endpoint's account.
	OwnerID string
	// EndDate, when set, ends the reservation (state expired after it).
	EndDate   time.Time
	StartDate time.Time
	// ReservationType is "default" (an ODCR; "" as default) or
	// "capacity-block" (bought for StartDate..EndDate, always targeted:
	// launches go in only with MarketType capacity-block, none before
	// StartDate, and EC2 terminates its instances CapacityBlockReclaim
	// before EndDate).
	ReservationType string
	// Interruptible marks a default reservation its owner lent out and
	// may reclaim (ReclaimInterruptible): launches go in only as
	// reserved-capacity with MarketType interruptible-capacity-reservation.
	Interruptible bool

	// AvailableInstanceCount is TotalInstanceCount less the instances in it
	// not yet terminated (filled in by the snapshots).
	AvailableInstanceCount int
	// State is "active", or "expired" past EndDate (snapshots).
	State string
	// Held instances are in use by others (SetReservationHeld); the
	// reservation's AvailableInstanceCount shows them from HeldSeenAt on.
	Held       int
	HeldSeenAt time.Time
}

// CapacityBlockReclaim is how long before a capacity block's end EC2
// starts terminating its instances (30 minutes; its warning event comes
// 10 minutes earlier).
const CapacityBlockReclaim = 30 * time.Minute

type reservation struct {
	CapacityReservation
	seq uint64
}

// SetReservationHeld makes n of the reservation's instances taken by
// launches outside this endpoint's view (another team's instances in a
// shared reservation): they count against launches into it at once, as
// its own instances do, but DescribeCapacityReservations' available count
// shows them only after unseenFor (EC2's counts are eventually
// consistent: a launch can be refused with ReservationCapacityExceeded
// while the count still says there is room).
func (s *Server) SetReservationHeld(id string, n int, unseenFor time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reservations[id]
	if r == nil {
		return fmt.Errorf("no capacity reservation %s", id)
	}
	r.Held = max(0, n)
	r.HeldSeenAt = time.Now().Add(unseenFor)
	return nil
}

// AddCapacityReservation creates a reservation (as an account owner would
// in the console) and returns it with its id. The type must be in the
// catalog and offered in the zone. Reservations are kept by SaveState.
func (s *Server) AddCapacityReservation(r CapacityReservation) (CapacityReservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.opts.Catalog.Get(r.InstanceType)
	if !ok {
		return CapacityReservation{}, fmt.Errorf("capacity reservation: instance type %q is not in the catalog", r.InstanceType)
	}
	if !slices.Contains(s.opts.Zones, r.Zone) || !s.offered(it, r.Zone) {
		return CapacityReservation{}, fmt.Errorf("capacity reservation: %s is not offered in zone %q", r.InstanceType, r.Zone)
	}
	if r.TotalInstanceCount < 1 {
		return CapacityReservation{}, fmt.Errorf("capacity reservation: TotalInstanceCount %d, want at least 1", r.TotalInstanceCount)
	}
	switch r.InstanceMatchCriteria {
	case "":
		r.InstanceMatchCriteria = "targeted"
	case "open", "targeted":
	default:
		return CapacityReservation{}, fmt.Errorf("capacity reservation: instance match criteria %q is not open or targeted", r.InstanceMatchCriteria)
	}
	if err := checkReservationKind(&r); err != nil {
		return CapacityReservation{}, err
	}
	if r.OwnerID == "" {
		r.OwnerID = s.opts.AccountID
	}
	if r.StartDate.IsZero() {
		r.StartDate = time.Now().UTC().Truncate(time.Second)
	}
	r.Tags = maps.Clone(r.Tags)
	r.ID = s.resourceIDLocked("cr")
	if s.reservations == nil {
		s.reservations = map[string]*reservation{}
	}
	s.seq++
	s.reservations[r.ID] = &reservation{CapacityReservation: r, seq: s.seq}
	return s.reservationSnapshotLocked(s.reservations[r.ID], time.Now(), false), nil
}

// EnsureCapacityReservation returns the reservation tagged like r (same
// type, zone and tags) if there is one (a world resumed from its state
// directory), else adds r.
func (s *Server) EnsureCapacityReservation(r CapacityReservation) (CapacityReservation, error) {
	for _, have := range s.CapacityReservations() {
		if have.InstanceType == r.InstanceType && have.Zone == r.Zone && maps.Equal(have.Tags, r.Tags) {
			return have, nil
		}
	}
	return s.AddCapacityReservation(r)
}

// CapacityReservations returns every reservation with its available count.
func (s *Server) CapacityReservations() []CapacityReservation {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var out []CapacityReservation
	for _, r := range s.sortedReservationsLocked() {
		out = append(out, s.reservationSnapshotLocked(r, now, false))
	}
	return out
}

func (s *Server) sortedReservationsLocked() []*reservation {
	return slices.SortedFunc(maps.Values(s.reservations), func(a, b *reservation) int { return cmp.Compare(a.seq, b.seq) })
}

// reservationSnapshotLocked is the reservation at now: its true available
// count, or (described) the one DescribeCapacityReservations answers, which
// shows held instances only from HeldSeenAt on.
func (s *Server) reservationSnapshotLocked(r *reservation, now time.Time, described bool) CapacityReservation {
	out := r.CapacityReservation
	out.Tags = maps.Clone(r.Tags)
	held := r.Held
	if described && now.Before(r.HeldSeenAt) {
		held = 0
	}
	out.AvailableInstanceCount = max(0, r.TotalInstanceCount-s.reservationUsedLocked(r.ID)-held)
	out.State = "active"
	if r.ReservationType == ReservationTypeCapacityBlock && now.Before(r.StartDate) {
		out.State, out.AvailableInstanceCount = "scheduled", 0
	}
	if !r.EndDate.IsZero() && !now.Before(r.EndDate) {
		out.State = "expired"
		out.AvailableInstanceCount = 0
	}
	return out
}

// reservationUsedLocked counts the instances in the reservation that are
// not terminated (a shutting-down instance still holds its slot).
func (s *Server) reservationUsedLocked(id string) int {
	n := 0
	for _, in := range s.instances {
		if in.CapacityReservationID == id && in.State != StateTerminated {
			n++
		}
	}
	return n
}

// reservationForLaunchLocked decides which reservation an on-demand launch
// of the override goes into: the template's target when its preference is
// capacity-reservations-only (an error code when it cannot: unknown,
// ended, of another type or zone, launched as the wrong kind, or full),
// else an open default reservation of the type in the zone with room,
// unless the preference is none. "" launches outside any reservation.
func (s *Server) reservationForLaunchLocked(o *fleetOverride, capacityType string, now time.Time) (id, code, msg string) {
	d := &o.lt.Data
	if d.CapacityReservationPreference == PreferenceCapacityReservationsOnly || d.CapacityReservationID != "" {
		return s.targetedReservationLocked(o, capacityType, now)
	}
	if o.lifecycle != "" || d.MarketType == ReservationTypeCapacityBlock || d.MarketType == LifecycleInterruptible {
		return "", CodeInvalidParameterCombination, fmt.Sprintf("A launch with MarketType %s must target a capacity reservation.", cmp.Or(d.MarketType, o.lifecycle))
	}
	if capacityType != CapacityTypeOnDemand || d.CapacityReservationPreference == PreferenceNone {
		return "", "", ""
	}
	for _, r := range s.sortedReservationsLocked() {
		if r.InstanceMatchCriteria != "open" || r.InstanceType != o.it.Name || r.Zone != o.subnet.zone || r.kind() != "" {
			continue
		}
		if snap := s.reservationSnapshotLocked(r, now, false); snap.State == "active" && snap.AvailableInstanceCount > 0 {
			return r.ID, "", ""
		}
	}
	return "", "", ""
}

// targetedReservationLocked checks a launch into the template's target.
func (s *Server) targetedReservationLocked(o *fleetOverride, capacityType string, now time.Time) (id, code, msg string) {
	d := &o.lt.Data
	if capacityType == CapacityTypeSpot {
		return "", CodeInvalidParameterCombination, "Capacity Reservations cannot be used to launch Spot Instances."
	}
	r := s.reservations[d.CapacityReservationID]
	if r == nil {
		return "", CodeInvalidCapacityReservationIDNotFound, fmt.Sprintf("The capacity reservation ID '%s' does not exist", d.CapacityReservationID)
	}
	if code, msg := launchKindCode(r, o); code != "" {
		return "", code, msg
	}
	snap := s.reservationSnapshotLocked(r, now, false)
	switch {
	case snap.State == "scheduled":
		// EC2 answers a launch into a block that has not started with
		// insufficient capacity (EC2 Fleet capacity blocks walkthrough).
		return "", CodeInsufficientInstanceCapacity, fmt.Sprintf("The Capacity Block %s starts at %s.", r.ID, r.StartDate.UTC().Format(time.RFC3339))
	case snap.State != "active":
		return "", CodeInvalidCapacityReservationIDNotFound, fmt.Sprintf("The capacity reservation '%s' is %s", r.ID, snap.State)
	case r.ReservationType == ReservationTypeCapacityBlock && !now.Before(r.EndDate.Add(-CapacityBlockReclaim)):
		return "", CodeInsufficientInstanceCapacity, fmt.Sprintf("The Capacity Block %s is ending: its instances are being terminated.", r.ID)
	case o.it.Name != r.InstanceType || o.subnet.zone != r.Zone:
		return "", CodeInvalidParameterValue, fmt.Sprintf("The instance type %s in %s does not match the capacity reservation %s (%s in %s).",
			o.it.Name, o.subnet.zone, r.ID, r.InstanceType, r.Zone)
	case snap.AvailableInstanceCount <= 0:
		return "", CodeReservationCapacityExceeded, fmt.Sprintf("Insufficient capacity in the capacity reservation %s (%d instances reserved, all in use).",
			r.ID, r.TotalInstanceCount)
	}
	return r.ID, "", ""
}

// kind is the lifecycle of the reservation's instances ("" for a
// default, non-interruptible one).
func (r *reservation) kind() string {
	switch {
	case r.ReservationType == ReservationTypeCapacityBlock:
		return LifecycleCapacityBlock
	case r.Interruptible:
		return LifecycleInterruptible
	}
	return ""
}

// launchKindCode refuses a launch into r that is not of r's kind: a
// capacity block takes only DefaultTargetCapacityType capacity-block with
// a template of MarketType capacity-block; an interruptible reservation
// only reserved-capacity (ReservedCapacityOptions
// interruptible-capacity-reservation) with MarketType
// interruptible-capacity-reservation; a default one neither. The codes
// and texts are the local EC2's (EC2's own are not documented).
func launchKindCode(r *reservation, o *fleetOverride) (code, msg string) {
	want := r.kind()
	if o.lifecycle != want {
		return CodeInvalidParameterCombination, fmt.Sprintf("The capacity reservation %s (%s) cannot be launched into with DefaultTargetCapacityType %s.",
			r.ID, cmp.Or(want, "default"), cmp.Or(o.targetType, CapacityTypeOnDemand))
	}
	if mt := o.lt.Data.MarketType; mt != want {
		return CodeInvalidParameterCombination, fmt.Sprintf("The capacity reservation %s (%s) needs InstanceMarketOptions.MarketType %s in the launch template, not %q.",
			r.ID, cmp.Or(want, "default"), cmp.Or(want, "(none)"), mt)
	}
	return "", ""
}

// checkReservationKind validates a new reservation's type and dates.
func checkReservationKind(r *CapacityReservation) error {
	switch r.ReservationType {
	case "", ReservationTypeDefault:
		r.ReservationType = ReservationTypeDefault
	case ReservationTypeCapacityBlock:
		if r.Interruptible {
			return fmt.Errorf("capacity reservation: a capacity block cannot be interruptible")
		}
		if r.EndDate.IsZero() || r.InstanceMatchCriteria != "targeted" {
			return fmt.Errorf("capacity reservation: a capacity block needs an EndDate and targeted instance match criteria")
		}
	default:
		return fmt.Errorf("capacity reservation: type %q is not default or capacity-block", r.ReservationType)
	}
	return nil
}

// describeCapacityReservations answers DescribeCapacityReservations:
// CapacityReservationId.N (each must exist: InvalidCapacityReservationId.NotFound;
// MaxResults cannot be combined with ids), the filters instance-type,
// availability-zone, state, owner-id, instance-match-criteria, tenancy,
// instance-platform, tag:<key> and tag-key, MaxResults 1-1000 and NextToken.
func (s *Server) describeCapacityReservations(f form) (withRequestID, error) {
	ids := f.strings("CapacityReservationId")
	if len(ids) > 0 && f.get("MaxResults") != "" {
		return nil, newError(http.StatusBadRequest, CodeInvalidParameterCombination,
			"The parameter CapacityReservationIds cannot be used with the parameter MaxResults")
	}
	s.mu.Lock()
	now := time.Now()
	var items []CapacityReservation
	keys := map[string]uint64{}
	for _, id := range ids {
		if !capacityReservationIDPattern(id) {
			s.mu.Unlock()
			return nil, newError(http.StatusBadRequest, CodeInvalidCapacityReservationIDMalformed, "Invalid id: \"%s\"", id)
		}
		if s.reservations[id] == nil {
			s.mu.Unlock()
			return nil, newError(http.StatusBadRequest, CodeInvalidCapacityReservationIDNotFound, "The capacity reservation ID '%s' does not exist", id)
		}
	}
	for _, r := range s.sortedReservationsLocked() {
		if len(ids) > 0 && !slices.Contains(ids, r.ID) {
			continue
		}
		items = append(items, s.reservationSnapshotLocked(r, now, true))
		keys[r.ID] = r.seq
	}
	s.mu.Unlock()
	items, next, err := filterPage(f, items, fields[CapacityReservation]{
		"instance-type":           func(r CapacityReservation) []string { return []string{r.InstanceType} },
		"availability-zone":       func(r CapacityReservation) []string { return []string{r.Zone} },
		"state":                   func(r CapacityReservation) []string { return []string{r.State} },
		"owner-id":                func(r CapacityReservation) []string { return []string{r.OwnerID} },
		"instance-match-criteria": func(r CapacityReservation) []string { return []string{r.InstanceMatchCriteria} },
		"tenancy":                 func(CapacityReservation) []string { return []string{"default"} },
		"instance-platform":       func(CapacityReservation) []string { return []string{"Linux/UNIX"} },
	}, func(r CapacityReservation) map[string]string { return r.Tags },
		func(r CapacityReservation) uint64 { return keys[r.ID] }, "capacityreservations", 0, 1, 1000)
	if err != nil {
		return nil, err
	}
	out := &describeCapacityReservationsResponse{NextToken: next}
	for _, r := range items {
		x := capacityReservationXML{
			ID: r.ID, OwnerID: r.OwnerID, Arn: "arn:aws:ec2:" + s.opts.Region + ":" + r.OwnerID + ":capacity-reservation/" + r.ID,
			AvailabilityZone: r.Zone, InstanceType: r.InstanceType, InstancePlatform: "Linux/UNIX", Tenancy: "default",
			TotalInstanceCount: r.TotalInstanceCount, AvailableInstanceCount: r.AvailableInstanceCount, State: r.State,
			StartDate: r.StartDate.UTC().Format(time.RFC3339), CreateDate: r.StartDate.UTC().Format(time.RFC3339),
			EndDateType: "unlimited", InstanceMatchCriteria: r.InstanceMatchCriteria, ReservationType: r.ReservationType,
			Interruptible: r.Interruptible, Tags: tagSet(r.Tags),
		}
		if !r.EndDate.IsZero() {
			x.EndDate, x.EndDateType = r.EndDate.UTC().Format(time.RFC3339), "limited"
		}
		out.Reservations = append(out.Reservations, x)
	}
	return out, nil
}

func capacityReservationIDPattern(id string) bool {
	if len(id) < 4 || id[:3] != "cr-" {
		return false
	}
	for _, c := range id[3:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

type describeCapacityReservationsResponse struct {
	meta
	Reservations []capacityReservationXML `xml:"capacityReservationSet>item"`
	NextToken    string                   `xml:"nextToken,omitempty"`
}

type capacityReservationXML struct {
	ID                     string   `xml:"capacityReservationId"`
	OwnerID                string   `xml:"ownerId"`
	Arn                    string   `xml:"capacityReservationArn"`
	AvailabilityZone       string   `xml:"availabilityZone"`
	InstanceType           string   `xml:"instanceType"`
	InstancePlatform       string   `xml:"instancePlatform"`
	Tenancy                string   `xml:"tenancy"`
	TotalInstanceCount     int      `xml:"totalInstanceCount"`
	AvailableInstanceCount int      `xml:"availableInstanceCount"`
	State                  string   `xml:"state"`
	StartDate              string   `xml:"startDate"`
	EndDate                string   `xml:"endDate,omitempty"`
	EndDateType            string   `xml:"endDateType"`
	InstanceMatchCriteria  string   `xml:"instanceMatchCriteria"`
	CreateDate             string   `xml:"createDate"`
	ReservationType        string   `xml:"reservationType"`
	Interruptible          bool     `xml:"interruptible"`
	Tags                   []tagXML `xml:"tagSet>item"`
}

// runningReservationLocked is the reservation the instance runs in now:
// its launch's, until that reservation ends (expired or cancelled), when
// EC2 moves a default reservation's instances to On-Demand capacity and
// DescribeInstances names none (a capacity block's instances are
// terminated before its end instead).
func (s *Server) runningReservationLocked(in *instance, now time.Time) string {
	r := s.reservations[in.CapacityReservationID]
	if r == nil || r.ReservationType == ReservationTypeCapacityBlock || r.EndDate.IsZero() || now.Before(r.EndDate) {
		return in.CapacityReservationID
	}
	return ""
}

// EndCapacityReservation ends a reservation now (as its expiry or a
// cancellation): state expired, no capacity left, and its running
// instances go on as On-Demand capacity (runningReservationLocked).
func (s *Server) EndCapacityReservation(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reservations[id]
	if r == nil {
		return fmt.Errorf("capacity reservation %s: not found", id)
	}
	if r.ReservationType == ReservationTypeCapacityBlock {
		return fmt.Errorf("capacity reservation %s: a capacity block ends at its EndDate", id)
	}
	r.EndDate = time.Now()
	return nil
}

// reservationSpecOf is what DescribeInstances shows of the instance's
// reservation preference: its template's (open by default), with the
// reservation as target when it was launched capacity-reservations-only.
func reservationSpecOf(in *instance, running string) reservationSpecXML {
	x := reservationSpecXML{Preference: cmp.Or(in.CapacityReservationPreference, PreferenceOpen)}
	if x.Preference == PreferenceCapacityReservationsOnly && running != "" {
		x.Target = &reservationTargetXML{CapacityReservationID: running}
	}
	return x
}
