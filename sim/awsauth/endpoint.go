package awsauth

import "net/http"

// What an endpoint calls around its handlers: each service answers a
// refusal in its own error shape (Refuse), the rest is the same for all.
// A nil *Guard serves every request (endpoints without one: unit tests).

// Refuse writes a refused request's answer as the service gives it.
type Refuse func(http.ResponseWriter, *Failure)

// Caller authenticates r for the service (its signing name): the caller,
// or false once refuse has answered. Without a guard every request
// passes, with a nil caller.
func (g *Guard) Caller(w http.ResponseWriter, r *http.Request, service string, refuse Refuse) (*Caller, bool) {
	if g == nil {
		return nil, true
	}
	c, f := g.Authenticate(r, service)
	if f != nil {
		refuse(w, f)
		return nil, false
	}
	return c, true
}

// AuthorizeCaller is Authorize for a caller from Caller: nil for a nil
// caller (no guard), and checks is called only when there is one (it may
// read the request or take the endpoint's lock).
func (g *Guard) AuthorizeCaller(c *Caller, service, operation string, checks func() []Check) *Failure {
	if c == nil {
		return nil
	}
	return g.Authorize(c, service, operation, checks())
}

// Admit is Caller then AuthorizeCaller, for the endpoints that check a
// request in one step: false once refuse has answered.
func (g *Guard) Admit(w http.ResponseWriter, r *http.Request, service, operation string, checks func() []Check, refuse Refuse) bool {
	c, ok := g.Caller(w, r, service, refuse)
	if !ok {
		return false
	}
	if f := g.AuthorizeCaller(c, service, operation, checks); f != nil {
		refuse(w, f)
		return false
	}
	return true
}
