package ec2

import (
	"fmt"
	"net/http"
)

// apiError is an EC2 error response: an HTTP status, an error code and a
// message, written as <Response><Errors><Error>...</Error></Errors>.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalidParameter(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, "InvalidParameterValue", format, args...)
}

func missingParameter(name string) *apiError {
	return newError(http.StatusBadRequest, "MissingParameter",
		"The request must contain the parameter %s", name)
}

// Error codes the endpoint returns. The first group are the CreateFleet
// per-override codes Karpenter treats as "capacity unavailable".
const (
	CodeInsufficientInstanceCapacity = "InsufficientInstanceCapacity"
	CodeUnsupported                  = "Unsupported"
	CodeRequestLimitExceeded         = "RequestLimitExceeded"
	CodeInvalidInstanceIDNotFound    = "InvalidInstanceID.NotFound"
	CodeInvalidInstanceIDMalformed   = "InvalidInstanceID.Malformed"
	CodeInvalidSubnetIDNotFound      = "InvalidSubnetID.NotFound"
	CodeInvalidGroupNotFound         = "InvalidGroup.NotFound"
	CodeTagLimitExceeded             = "TagLimitExceeded"
	CodeInvalidInstanceType          = "InvalidInstanceType"
	CodeSpotMaxPriceTooLow           = "SpotMaxPriceTooLow"
	CodeIdempotentParameterMismatch  = "IdempotentParameterMismatch"

	CodeInsufficientFreeAddresses              = "InsufficientFreeAddressesInSubnet"
	CodeInvalidParameterValue                  = "InvalidParameterValue"
	CodeInvalidAMIIDNotFound                   = "InvalidAMIID.NotFound"
	CodeInvalidAMIIDMalformed                  = "InvalidAMIID.Malformed"
	CodeInvalidLaunchTemplateNameNotFound      = "InvalidLaunchTemplateName.NotFoundException"
	CodeInvalidLaunchTemplateNameAlreadyExists = "InvalidLaunchTemplateName.AlreadyExistsException"
	CodeInvalidLaunchTemplateNameMalformed     = "InvalidLaunchTemplateName.MalformedException"
	CodeInvalidLaunchTemplateIDNotFound        = "InvalidLaunchTemplateId.NotFound"
	CodeInvalidLaunchTemplateIDMalformed       = "InvalidLaunchTemplateId.Malformed"
	CodeInvalidLaunchTemplateIDVersionNotFound = "InvalidLaunchTemplateId.VersionNotFound"
	CodeInvalidUserDataMalformed               = "InvalidUserData.Malformed"
	CodeInvalidParameterCombination            = "InvalidParameterCombination"
	CodeUnauthorizedOperation                  = "UnauthorizedOperation"
	CodeUnfulfillableCapacity                  = "UnfulfillableCapacity"
	CodeUnsupportedOperation                   = "UnsupportedOperation"
	CodeFilterLimitExceeded                    = "FilterLimitExceeded"
)

// msgUnfulfillableConfig is the UnfulfillableCapacity entry CreateFleet
// adds when overrides were refused as InvalidParameterValue (an instance
// profile EC2 does not know yet, say): no capacity is short.
const msgUnfulfillableConfig = "Unable to fulfill capacity due to your request configuration. Please adjust your request and try again."
