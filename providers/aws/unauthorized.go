package aws

import (
	"errors"
	"fmt"
	"regexp"
)

// unauthorizedCodes are the error codes AWS services refuse a call with
// when the caller's IAM policy does not allow it.
var unauthorizedCodes = map[string]bool{
	"UnauthorizedOperation": true, // EC2 (also a CreateFleet per-override error)
	"AccessDenied":          true, // IAM, SQS (Query code)
	"AccessDeniedException": true, // SSM, EKS, Pricing
}

// AuthorizationError is AWS refusing a call because the worker's IAM
// policy does not allow it: the policy needs a grant (see
// deploy/iam-policy.json); no retry or other offering will make it pass,
// and it is never a lack of capacity.
type AuthorizationError struct {
	Code string
	// Action and Resource are what AWS names in its message ("User: ... is
	// not authorized to perform: <action> on resource: <resource>"); empty
	// when it does not say.
	Action, Resource string
	Err              error
}

func (e *AuthorizationError) Error() string {
	return fmt.Sprintf("AWS refused %s (%s: the worker's IAM policy does not allow it): %v", e.What(), e.Code, e.Err)
}

// What is the refused action and resource, as AWS named them ("a call"
// when it did not).
func (e *AuthorizationError) What() string {
	if e.Action == "" {
		return "a call"
	}
	return e.Action + " on " + e.Resource
}

func (e *AuthorizationError) Unwrap() error { return e.Err }

var notAuthorized = regexp.MustCompile(`not authorized to perform: (\S+) on resource: (\S+)`)

// newAuthorizationError reads the action and resource from AWS's message.
func newAuthorizationError(code, message string, err error) *AuthorizationError {
	e := &AuthorizationError{Code: code, Err: err}
	if m := notAuthorized.FindStringSubmatch(message); m != nil {
		e.Action, e.Resource = m[1], m[2]
	}
	return e
}

// AsUnauthorized returns the IAM refusal err is or wraps: an
// *AuthorizationError, or an AWS API error with a refusal code.
func AsUnauthorized(err error) (*AuthorizationError, bool) {
	var ae *AuthorizationError
	if errors.As(err, &ae) {
		return ae, true
	}
	if code := errorCode(err); unauthorizedCodes[code] {
		return newAuthorizationError(code, err.Error(), err), true
	}
	return nil, false
}

// IsUnauthorized reports whether err is an IAM refusal (AsUnauthorized).
func IsUnauthorized(err error) bool {
	_, ok := AsUnauthorized(err)
	return ok
}

// fleetUnauthorized is the first per-override refusal of a CreateFleet
// that launched nothing, as an *AuthorizationError (the others refuse the
// same launch for the other offerings).
func fleetUnauthorized(errs []FleetError) (*AuthorizationError, bool) {
	for _, e := range errs {
		if unauthorizedCodes[e.Code] {
			return newAuthorizationError(e.Code, e.Message, fmt.Errorf("CreateFleet: no instance launched: %w", e)), true
		}
	}
	return nil, false
}
