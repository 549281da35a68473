package awsauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/joinery/joinery/sim/awsauth/policy"
)

var (
	worker = Identity{Name: "worker", ARN: "arn:aws:sts::123456789012:assumed-role/joinery/worker", RoleARN: "arn:aws:iam::123456789012:role/joinery",
		Account: "123456789012", AccessKeyID: "AKIAWORKER0000000001", SecretAccessKey: "worker-secret",
		Policies: []*policy.Policy{policy.MustParse("worker", []byte(`{"Version":"2012-10-17","Statement":[
			{"Sid":"Read","Effect":"Allow","Action":"ec2:Describe*","Resource":"*","Condition":{"StringEquals":{"aws:RequestedRegion":"us-east-1"}}},
			{"Sid":"NoSpot","Effect":"Deny","Action":"ec2:DescribeSpotPriceHistory","Resource":"*"}]}`))}}
	admin = Identity{Name: "admin", ARN: "arn:aws:iam::123456789012:user/admin", Account: "123456789012",
		AccessKeyID: "AKIAADMIN00000000001", SecretAccessKey: "admin-secret", Policies: []*policy.Policy{policy.AllowAll("admin")}}
)

// authServer answers 200 with the caller's name, or 403 with the failure.
func authServer(t *testing.T, g *Guard) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, f := g.Authenticate(r, "ec2")
		if f != nil {
			http.Error(w, f.Message, http.StatusForbidden)
			return
		}
		b := make([]byte, 100)
		n, _ := r.Body.Read(b)
		_, _ = w.Write([]byte(c.Identity.Name + " " + c.Region + " " + string(b[:n])))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func signed(t *testing.T, url string, id Identity, body, service string, when time.Time) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	sum := sha256.Sum256([]byte(body))
	if err := v4.NewSigner().SignHTTP(context.Background(), id.Credentials(), r, hex.EncodeToString(sum[:]), service, "us-east-1", when); err != nil {
		t.Fatal(err)
	}
	return r
}

func do(t *testing.T, r *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b := make([]byte, 500)
	n, _ := resp.Body.Read(b)
	return resp.StatusCode, strings.TrimSpace(string(b[:n]))
}

func TestAuthenticate(t *testing.T) {
	g := NewGuard(worker, admin)
	srv := authServer(t, g)
	now := time.Now()
	body := "Action=DescribeInstances&Version=2016-11-15"

	if code, got := do(t, signed(t, srv.URL, worker, body, "ec2", now)); code != 200 || got != "worker us-east-1 "+body {
		t.Errorf("worker: %d %q (the body must reach the endpoint)", code, got)
	}
	stranger := worker
	stranger.AccessKeyID = "AKIASTRANGER00000001"
	for name, c := range map[string]struct {
		r    *http.Request
		want string
	}{
		"unknown key":    {signed(t, srv.URL, stranger, body, "ec2", now), "security token included in the request is invalid"},
		"wrong secret":   {signed(t, srv.URL, Identity{AccessKeyID: worker.AccessKeyID, SecretAccessKey: "guess"}, body, "ec2", now), "does not match"},
		"wrong service":  {signed(t, srv.URL, worker, body, "iam", now), "scoped to correct service: 'ec2'"},
		"expired":        {signed(t, srv.URL, worker, body, "ec2", now.Add(-20*time.Minute)), "Signature expired"},
		"body tampered":  {tamper(signed(t, srv.URL, worker, body, "ec2", now), "Action=TerminateInstances&Version=2016-11-15"), "does not match"},
		"unsigned":       {unsigned(t, srv.URL), "missing Authentication Token"},
		"header changed": {retarget(signed(t, srv.URL, worker, body, "ec2", now)), "does not match"},
	} {
		if code, got := do(t, c.r); code != 403 || !strings.Contains(got, c.want) {
			t.Errorf("%s: %d %q, want 403 with %q", name, code, got, c.want)
		}
	}
}

func tamper(r *http.Request, body string) *http.Request {
	r.Body = http.NoBody
	r2, _ := http.NewRequest(r.Method, r.URL.String(), strings.NewReader(body))
	r2.Header = r.Header.Clone()
	return r2
}

func unsigned(t *testing.T, url string) *http.Request {
	r, err := http.NewRequest(http.MethodPost, url, strings.NewReader("Action=DescribeInstances"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// retarget changes a signed header's value after signing.
func retarget(r *http.Request) *http.Request {
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestAuthorize(t *testing.T) {
	g := NewGuard(worker, admin)
	g.SetRecording(true)
	w := &Caller{Identity: &worker, Region: "us-east-1"}
	if f := g.Authorize(w, "ec2", "DescribeInstances", []Check{{Action: "ec2:DescribeInstances", Resource: "*"}}); f != nil {
		t.Errorf("DescribeInstances in the region: %v", f)
	}
	other := &Caller{Identity: &worker, Region: "eu-west-1"}
	f := g.Authorize(other, "ec2", "DescribeInstances", []Check{{Action: "ec2:DescribeInstances", Resource: "*"}})
	if f == nil || f.Kind != Denied || f.Decision.ExplicitDeny ||
		f.Message != "User: arn:aws:sts::123456789012:assumed-role/joinery/worker is not authorized to perform: ec2:DescribeInstances on resource: * because no identity-based policy allows the ec2:DescribeInstances action" {
		t.Fatalf("another region: %+v", f)
	}
	f = g.Authorize(w, "ec2", "DescribeSpotPriceHistory", []Check{{Action: "ec2:DescribeSpotPriceHistory", Resource: "*"}})
	if f == nil || !f.Decision.ExplicitDeny || !strings.HasSuffix(f.Message, "with an explicit deny in an identity-based policy") {
		t.Fatalf("explicit deny: %+v", f)
	}
	msg := f.EC2Message()
	enc := msg[strings.LastIndex(msg, " ")+1:]
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || !strings.HasPrefix(msg, "You are not authorized to perform this operation. User: ") {
		t.Fatalf("EC2 message %q: %v", msg, err)
	}
	var dec decodedMessage
	if err := json.Unmarshal(raw, &dec); err != nil {
		t.Fatal(err)
	}
	if dec.Allowed || !dec.ExplicitDeny || dec.Context.Action != "ec2:DescribeSpotPriceHistory" || len(dec.MatchedStatements.Items) != 2 ||
		dec.MatchedStatements.Items[1].StatementID != "NoSpot" || dec.Context.Principal.ARN != worker.ARN {
		t.Errorf("decoded %s", raw)
	}
	if a := g.Authorize(&Caller{Identity: &admin, Region: "eu-west-1"}, "ec2", "TerminateInstances",
		[]Check{{Action: "ec2:TerminateInstances", Resource: "arn:aws:ec2:eu-west-1:123456789012:instance/i-1"}}); a != nil {
		t.Errorf("admin: %v", a)
	}
	calls := g.Calls()
	if len(calls) != 4 || calls[1].Principal != "worker" || calls[1].Results[0].Allowed ||
		calls[0].Results[0].Context["aws:PrincipalArn"][0] != worker.RoleARN || calls[0].Results[0].Context["aws:RequestedRegion"][0] != "us-east-1" {
		t.Errorf("recorded %+v", calls)
	}
}
