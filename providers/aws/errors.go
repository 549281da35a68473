package aws

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/smithy-go"
)

// ErrNotFound is returned (wrapped) when an instance does not exist or is
// terminated.
var ErrNotFound = errors.New("not found")

// IsNotFound reports whether err means the instance is gone: ErrNotFound or
// EC2's InvalidInstanceID.NotFound.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || errorCode(err) == "InvalidInstanceID.NotFound"
}

// errorCode returns the EC2 error code inside err, or "".
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// unfulfillableCodes are the CreateFleet per-override error codes that mean
// the offering cannot be had for now (Karpenter's list): mark it
// unavailable and try another.
var unfulfillableCodes = map[string]bool{
	"InsufficientInstanceCapacity":      true,
	"MaxSpotInstanceCountExceeded":      true,
	"VcpuLimitExceeded":                 true,
	"UnfulfillableCapacity":             true,
	"Unsupported":                       true,
	"InsufficientFreeAddressesInSubnet": true,
	// Not in Karpenter's list: a subnet with no whole free /28 for the
	// class's prefixes (spec.ipPrefixCount) cannot take the node now,
	// another zone's may.
	"InsufficientCidrBlocks":        true,
	"MaxFleetCountExceeded":         true,
	CodeReservationCapacityExceeded: true,
}

// IsUnfulfillableCode reports whether a CreateFleet error code means the
// offering has no capacity for now.
func IsUnfulfillableCode(code string) bool { return unfulfillableCodes[code] }

// OfferingKey names one offering: an instance type in a zone bought as a
// capacity type ("on-demand" or "spot"), within a placement group when
// PlacementGroup is set (as Karpenter scopes a group's shortages: a full
// spread group is no shortage outside it).
type OfferingKey struct {
	InstanceType   string
	Zone           string
	CapacityType   string
	PlacementGroup string `json:",omitempty"`
}

func (o OfferingKey) String() string {
	s := o.InstanceType + "/" + o.Zone + "/" + o.CapacityType
	if o.PlacementGroup != "" {
		s += " in " + o.PlacementGroup
	}
	return s
}

// FleetError is one per-override error CreateFleet reported.
type FleetError struct {
	Offering OfferingKey
	Code     string
	Message  string
}

func (e FleetError) Error() string { return e.Offering.String() + ": " + e.Code + ": " + e.Message }

// InsufficientCapacityError is returned by Launch when CreateFleet launched
// nothing and at least one offering failed as unfulfillable. Offerings are
// the unfulfillable ones, to be marked unavailable; Errors are every
// per-override error, in EC2's order.
type InsufficientCapacityError struct {
	Offerings []OfferingKey
	Errors    []FleetError
}

func (e *InsufficientCapacityError) Error() string {
	names := make([]string, len(e.Offerings))
	for i, o := range e.Offerings {
		names[i] = o.String()
	}
	return fmt.Sprintf("insufficient capacity: no instance launched; unavailable offerings: %s", strings.Join(names, ", "))
}

// IsInsufficientCapacity reports whether err is (or wraps) an
// *InsufficientCapacityError.
func IsInsufficientCapacity(err error) bool {
	var ice *InsufficientCapacityError
	return errors.As(err, &ice)
}

// NoLaunchError is returned by Launch when CreateFleet launched nothing
// and not for lack of capacity alone: Errors are every per-override error,
// in EC2's order. EC2 keeps that answer for the request's client token.
type NoLaunchError struct{ Errors []FleetError }

func (e *NoLaunchError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		msgs[i] = fe.Error()
	}
	return "CreateFleet: no instance launched: " + strings.Join(msgs, "\n")
}

// FleetAnswered reports whether err is a CreateFleet answer that launched
// nothing (no capacity, a refused override): EC2 keeps that answer for the
// request's client token and gives it back to the same request, so a new
// try needs a new token. A request EC2 refused as a whole, or whose answer
// was lost, did not use its token.
func FleetAnswered(err error) bool {
	var none *NoLaunchError
	var ice *InsufficientCapacityError
	var fe FleetError
	return errors.As(err, &none) || errors.As(err, &ice) || errors.As(err, &fe)
}

// Answered reports whether EC2 answered the call that returned err (nil,
// an API error, a CreateFleet answer that launched nothing), as opposed
// to an answer lost on the way (a timeout, a broken connection, the
// caller's context ending): a CreateFleet whose answer was lost may have
// launched.
func Answered(err error) bool {
	var api smithy.APIError
	return err == nil || FleetAnswered(err) || errors.As(err, &api)
}

// InstanceProfileNotReady returns the error of a launch EC2 refused for
// its instance profile (err is or wraps a *NoLaunchError with such an
// entry): one EC2 does not know, or whose role it does not see. IAM
// changes take a while to reach EC2, so for a profile IAM has this is
// propagation: retry, and mark no offering unavailable.
func InstanceProfileNotReady(err error) (FleetError, bool) {
	var nl *NoLaunchError
	if !errors.As(err, &nl) {
		return FleetError{}, false
	}
	for _, fe := range nl.Errors {
		if fe.Code == "InvalidParameterValue" && (strings.Contains(fe.Message, "Invalid IAM Instance Profile") ||
			strings.Contains(fe.Message, "has no associated IAM Roles")) {
			return fe, true
		}
	}
	return FleetError{}, false
}

// IsIdempotentParameterMismatch reports whether EC2 refused a request
// whose client token an earlier request with other parameters used.
func IsIdempotentParameterMismatch(err error) bool {
	return errorCode(err) == "IdempotentParameterMismatch"
}

// IsLaunchTemplateNotFound reports whether CreateFleet refused a launch
// template that does not exist (deleted since it was cached).
func IsLaunchTemplateNotFound(err error) bool {
	switch errorCode(err) {
	case "InvalidLaunchTemplateName.NotFoundException", "InvalidLaunchTemplateId.NotFound":
		return true
	}
	return false
}

// nowISO is the current time as EC2 writes timestamps (comparable as strings).
func nowISO() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }
