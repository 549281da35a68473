package awsauth

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Admit: a nil guard serves every request without listing its checks; a
// guard refuses an unsigned request before listing them and a denied one
// after, each through refuse, and serves an allowed one.
func TestAdmit(t *testing.T) {
	var listed, refused int
	checks := func(action string) func() []Check {
		return func() []Check { listed++; return []Check{{Action: action, Resource: "*"}} }
	}
	refuse := func(w http.ResponseWriter, f *Failure) { refused++; http.Error(w, f.Message, http.StatusForbidden) }
	admit := func(g *Guard, r *http.Request, action string) bool {
		return g.Admit(httptest.NewRecorder(), r, "ec2", "Op", checks(action), refuse)
	}
	req := func(id *Identity) *http.Request {
		if id == nil {
			return httptest.NewRequest(http.MethodPost, "http://ec2.local/", nil)
		}
		return signed(t, "http://ec2.local/", *id, "", "ec2", time.Now())
	}
	if !admit(nil, req(nil), "ec2:DescribeInstances") || listed != 0 || refused != 0 {
		t.Errorf("no guard: listed %d refused %d", listed, refused)
	}
	g := NewGuard(worker)
	if admit(g, req(nil), "ec2:DescribeInstances") || listed != 0 || refused != 1 {
		t.Errorf("unsigned: listed %d refused %d", listed, refused)
	}
	if admit(g, req(&worker), "ec2:DescribeSpotPriceHistory") || listed != 1 || refused != 2 {
		t.Errorf("denied: listed %d refused %d", listed, refused)
	}
	if !admit(g, req(&worker), "ec2:DescribeInstances") || listed != 2 || refused != 2 {
		t.Errorf("allowed: listed %d refused %d", listed, refused)
	}
}
