package awsauth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// maxSkew is how far a request's X-Amz-Date may be from the server's
// clock, as AWS allows.
const maxSkew = 15 * time.Minute

// sigV4 is a parsed Authorization header.
type sigV4 struct {
	accessKey, date, region, service string
	signedHeaders, signature         string
}

func parseAuthorization(h string) (sigV4, string) {
	var s sigV4
	rest, ok := strings.CutPrefix(h, "AWS4-HMAC-SHA256 ")
	if !ok {
		return s, "Authorization header is not AWS4-HMAC-SHA256"
	}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			f := strings.Split(v, "/")
			if len(f) != 5 || f[4] != "aws4_request" {
				return s, "Credential must be <key>/<date>/<region>/<service>/aws4_request"
			}
			s.accessKey, s.date, s.region, s.service = f[0], f[1], f[2], f[3]
		case "SignedHeaders":
			s.signedHeaders = v
		case "Signature":
			s.signature = v
		}
	}
	if s.accessKey == "" || s.signedHeaders == "" || s.signature == "" {
		return s, "Authorization header needs Credential, SignedHeaders and Signature"
	}
	return s, ""
}

// Authenticate verifies r's SigV4 signature for the service's signing name
// ("ec2", "iam", "ssm", "sqs", "pricing", "eks") and returns the caller.
// It reads the body (the payload is signed) and puts it back for the
// endpoint.
func (g *Guard) Authenticate(r *http.Request, service string) (*Caller, *Failure) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, &Failure{Kind: MissingAuthentication, Message: "Request is missing Authentication Token"}
	}
	sig, why := parseAuthorization(h)
	if why != "" {
		return nil, &Failure{Kind: IncompleteSignature, Message: why}
	}
	id, ok := g.identity(sig.accessKey)
	if !ok {
		return nil, &Failure{Kind: UnknownAccessKey, Message: "The security token included in the request is invalid.", AccessKeyID: sig.accessKey}
	}
	if sig.service != service {
		return nil, &Failure{Kind: IncompleteSignature, Message: fmt.Sprintf("Credential should be scoped to correct service: '%s'.", service)}
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || !strings.HasPrefix(r.Header.Get("X-Amz-Date"), sig.date) {
		return nil, &Failure{Kind: IncompleteSignature, Message: "X-Amz-Date is missing or does not match the credential scope's date"}
	}
	if now := g.now(); when.Before(now.Add(-maxSkew)) || when.After(now.Add(maxSkew)) {
		return nil, &Failure{Kind: SignatureExpired, Message: fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - 15 min.)",
			when.Format("20060102T150405Z"), now.Add(-maxSkew).UTC().Format("20060102T150405Z"), now.UTC().Format("20060102T150405Z"))}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, &Failure{Kind: IncompleteSignature, Message: "cannot read the request body: " + err.Error()}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	want, err := signature(r, body, sig, id, when)
	if err != nil {
		return nil, &Failure{Kind: SignatureMismatch, Message: err.Error()}
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(sig.signature)) != 1 {
		return nil, &Failure{Kind: SignatureMismatch, Message: "The request signature we calculated does not match the signature you provided. " +
			"Check your AWS Secret Access Key and signing method. Consult the service documentation for details."}
	}
	return &Caller{Identity: id, Region: sig.region}, nil
}

// signature signs a copy of r holding only the headers the client signed
// with aws-sdk-go-v2's signer, and returns the signature it computes.
func signature(r *http.Request, body []byte, sig sigV4, id *Identity, when time.Time) (string, error) {
	cp, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	if err != nil {
		return "", err
	}
	cp.Host = r.Host
	for _, name := range strings.Split(sig.signedHeaders, ";") {
		switch name {
		case "host":
		case "content-length":
			cp.ContentLength = r.ContentLength
		default:
			cp.Header[http.CanonicalHeaderKey(name)] = r.Header.Values(name)
		}
	}
	hash := r.Header.Get("X-Amz-Content-Sha256")
	if hash == "" {
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:])
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), id.Credentials(), cp, hash, sig.service, sig.region, when); err != nil {
		return "", err
	}
	got, _ := parseAuthorization(cp.Header.Get("Authorization"))
	if got.signedHeaders != sig.signedHeaders {
		return "", fmt.Errorf("signed headers %q cannot be verified (the signer signs %q)", sig.signedHeaders, got.signedHeaders)
	}
	return got.signature, nil
}
