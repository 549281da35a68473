// Package pricing is a local AWS Price List Query API endpoint (service
// "pricing") for the local world and tests: GetProducts for AmazonEC2, one
// product per instance type of the catalog, priced from the embedded
// on-demand prices (times Options.PriceFactor for another region).
//
// Server is an http.Handler that speaks the AWS JSON 1.1 protocol (POST
// with X-Amz-Target: AWSPriceListService.<Operation>, JSON bodies, errors
// as {"__type": ..., "Message": ...}) closely enough for the real
// aws-sdk-go-v2 pricing client pointed at it with BaseEndpoint. Signatures
// are not checked.
//
// Each answer's PriceList holds JSON documents as strings, in the Price
// List API's aws_v1 shape: {"product": {"productFamily", "attributes":
// {instanceType, regionCode, location, operatingSystem, tenancy,
// preInstalledSw, capacitystatus, marketoption, ...}, "sku"}, "terms":
// {"OnDemand": {<sku>.<offer>: {"priceDimensions": {<rate>:
// {"pricePerUnit": {"USD": "0.0960000000"}, "unit": "Hrs"}}}}}}. Every
// type has its Linux, shared-tenancy, Used row and the capacity
// reservation rows (UnusedCapacityReservation, AllocatedCapacityReservation)
// AWS also lists at the same price; a bare metal type's product family is
// "Compute Instance (bare metal)" and it also has a Dedicated row. Filters
// are TERM_MATCH on an attribute (or serviceCode, productFamily), as the
// API's; pages hold at most MaxResults (1 to 100, default 100) documents,
// NextToken continues, a token that is not one of this server's is
// InvalidNextTokenException.
package pricing

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/sim/awsauth"
	"github.com/joinery/joinery/sim/internal/reqlog"
	"github.com/joinery/joinery/sim/internal/serve"
	"github.com/joinery/joinery/sim/internal/throttle"
)

// Locations are the Price List API's location names of the regions the
// local world runs as (attribute "location").
var Locations = map[string]string{
	"us-east-1":      "US East (N. Virginia)",
	"us-east-2":      "US East (Ohio)",
	"us-west-2":      "US West (Oregon)",
	"eu-west-1":      "EU (Ireland)",
	"eu-central-1":   "EU (Frankfurt)",
	"ap-southeast-1": "Asia Pacific (Singapore)",
}

// Options configures New.
type Options struct {
	// Guard, when set, authenticates every request (SigV4) and authorizes
	// pricing:GetProducts (sim/awsauth).
	Guard *awsauth.Guard
	// Region is the region the products are priced for (attribute
	// regionCode; default us-east-1). GetProducts for another region code
	// answers no products, as the API does.
	Region string
	// Catalog supplies the instance types and their us-east-1 on-demand
	// prices (default catalog.MustDefault()).
	Catalog *catalog.Catalog
	// PriceFactor scales every price (default 1): a region other than
	// us-east-1 runs with the embedded prices times it.
	PriceFactor float64
	// ThrottleScale turns on the API's token buckets (10 calls, 5 a
	// second, per action) times this factor: calls past them answer
	// ThrottlingException. 0: no buckets.
	ThrottleScale float64
}

// Server is the local Pricing endpoint; create it with New. Safe for
// concurrent use.
type Server struct {
	reqlog.Recorder[Request] // SetRecording, Requests, ResetRequests

	opts     Options
	products []product
	mu       sync.Mutex
	refused  string // Refuse: error type
	ids      serve.RequestIDs
	buckets  *throttle.Set // nil: never throttled
}

// product is one price list document and the attributes filters match.
type product struct {
	attrs map[string]string
	doc   string
}

// New returns a Server.
func New(o Options) *Server {
	o.Region = cmp.Or(o.Region, serve.DefaultRegion)
	if o.Catalog == nil {
		o.Catalog = catalog.MustDefault()
	}
	if o.PriceFactor <= 0 {
		o.PriceFactor = 1
	}
	s := &Server{opts: o, buckets: throttle.NewSet(o.ThrottleScale, nil)}
	for _, it := range o.Catalog.Types {
		if it.OnDemandPrice <= 0 {
			continue
		}
		price := Price(it, o.PriceFactor)
		family := "Compute Instance"
		rows := []struct{ tenancy, status string }{{"Shared", "Used"}, {"Shared", "UnusedCapacityReservation"}, {"Shared", "AllocatedCapacityReservation"}}
		if it.BareMetal {
			family = "Compute Instance (bare metal)"
			rows = append(rows, struct{ tenancy, status string }{"Dedicated", "Used"})
		}
		for _, r := range rows {
			s.products = append(s.products, s.newProduct(it, family, r.tenancy, r.status, price))
		}
	}
	return s
}

// Price is the on-demand price the endpoint lists for the type: its
// catalog price times factor, rounded to 1/10000 USD (factor 1: the
// catalog price itself).
func Price(it *catalog.InstanceType, factor float64) float64 {
	if factor == 1 {
		return it.OnDemandPrice
	}
	return math.Round(it.OnDemandPrice*factor*10000) / 10000
}

func (s *Server) newProduct(it *catalog.InstanceType, family, tenancy, status string, price float64) product {
	// A SKU per row, stable across runs: the type and row hashed.
	sku := skuOf(it.Name + "/" + tenancy + "/" + status + "/" + s.opts.Region)
	attrs := map[string]string{
		"servicecode": "AmazonEC2", "serviceCode": "AmazonEC2", "productFamily": family,
		"instanceType": it.Name, "instanceFamily": familyName(it), "regionCode": s.opts.Region,
		"location": Locations[s.opts.Region], "locationType": "AWS Region",
		"operatingSystem": "Linux", "tenancy": tenancy, "preInstalledSw": "NA", "capacitystatus": status,
		"marketoption": "OnDemand", "licenseModel": "No License required", "usagetype": "BoxUsage:" + it.Name,
		"operation": "RunInstances", "vcpu": strconv.Itoa(it.VCPU),
		"memory": strconv.FormatFloat(float64(it.MemoryMiB)/1024, 'f', -1, 64) + " GiB",
	}
	doc := map[string]any{
		"product": map[string]any{
			"productFamily": family,
			"attributes":    withoutKeys(attrs, "serviceCode", "productFamily"),
			"sku":           sku,
		},
		"serviceCode": "AmazonEC2",
		"terms": map[string]any{"OnDemand": map[string]any{
			sku + ".JRTCKXETXF": map[string]any{
				"priceDimensions": map[string]any{sku + ".JRTCKXETXF.6YS6EN2CT7": map[string]any{
					"unit": "Hrs", "endRange": "Inf", "beginRange": "0", "appliesTo": []string{},
					"rateCode":     sku + ".JRTCKXETXF.6YS6EN2CT7",
					"description":  fmt.Sprintf("$%s per On Demand Linux %s Instance Hour", strconv.FormatFloat(price, 'f', -1, 64), it.Name),
					"pricePerUnit": map[string]string{"USD": strconv.FormatFloat(price, 'f', 10, 64)},
				}},
				"sku": sku, "effectiveDate": "2026-07-01T00:00:00Z", "offerTermCode": "JRTCKXETXF", "termAttributes": map[string]string{},
			},
		}},
		"version": "20260720000000", "publicationDate": "2026-07-20T00:00:00Z",
	}
	b, _ := json.Marshal(doc)
	return product{attrs: attrs, doc: string(b)}
}

func familyName(it *catalog.InstanceType) string {
	switch {
	case it.GPUCount > 0 || it.AcceleratorCount > 0:
		return "GPU instance"
	case it.Category == "c":
		return "Compute optimized"
	case it.Category == "r" || it.Category == "x" || it.Category == "u":
		return "Memory optimized"
	case it.Category == "i" || it.Category == "d":
		return "Storage optimized"
	}
	return "General purpose"
}

func withoutKeys(m map[string]string, keys ...string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func skuOf(s string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	const alphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
	var b [16]byte
	for i := range b {
		b[i] = alphabet[h%uint64(len(alphabet))]
		h /= uint64(len(alphabet))
		if h == 0 {
			h = 0x9E3779B97F4A7C15 ^ uint64(i)
		}
	}
	return string(b[:])
}

// Options returns the server's options with defaults filled in.
func (s *Server) Options() Options { return s.opts }

// Start serves s on addr (default 127.0.0.1:0) and returns its base URL for
// the SDK's BaseEndpoint; stop shuts it down.
func (s *Server) Start(addr string) (baseURL string, stop func(), err error) {
	return serve.Start("pricing", addr, s)
}

// Refuse makes every later request fail with the error type
// (AccessDeniedException: HTTP 400, as for a caller without
// pricing:GetProducts); "" lifts the refusal.
func (s *Server) Refuse(errorType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused = errorType
}

type apiError = serve.JSONError

func invalidParameter(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "InvalidParameterException", Msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP answers one AWS JSON 1.1 request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, unknown := serve.JSONOperation(r, "AWSPriceListService.", "Price List")
	s.record(r, op)
	if unknown != nil {
		writeError(w, unknown)
		return
	}
	if s.throttled(w, op) {
		return
	}
	if !s.authorize(w, r, op) {
		return
	}
	s.mu.Lock()
	refused := s.refused
	s.mu.Unlock()
	if refused != "" {
		writeError(w, &apiError{Status: http.StatusBadRequest, Type: refused, Msg: "User is not authorized to perform: pricing:" + op})
		return
	}
	if op != "GetProducts" {
		writeError(w, &apiError{Status: http.StatusBadRequest, Type: "UnknownOperationException", Msg: "The local Pricing endpoint does not implement " + op})
		return
	}
	var in getProductsInput
	if err := serve.DecodeJSONBody(r, &in); err != nil {
		writeError(w, err)
		return
	}
	out, err := s.getProducts(in)
	if err != nil {
		writeError(w, err)
		return
	}
	serve.WriteJSON(w, s.ids.Next(), out)
}

type getProductsInput struct {
	ServiceCode   string
	FormatVersion string
	MaxResults    *int
	NextToken     string
	Filters       []struct {
		Type, Field, Value string
	}
}

type getProductsOutput struct {
	FormatVersion string   `json:"FormatVersion"`
	NextToken     string   `json:"NextToken,omitempty"`
	PriceList     []string `json:"PriceList"`
}

// getProducts filters the products and returns one page.
func (s *Server) getProducts(in getProductsInput) (*getProductsOutput, *apiError) {
	if in.ServiceCode == "" {
		return nil, invalidParameter("1 validation error detected: Value null at 'serviceCode' failed to satisfy constraint: Member must not be null")
	}
	if in.FormatVersion != "" && in.FormatVersion != "aws_v1" {
		return nil, invalidParameter("Input FormatVersion %s is not supported", in.FormatVersion)
	}
	max := 100
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > 100 {
			return nil, invalidParameter("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 1 and 100", *in.MaxResults)
		}
		max = *in.MaxResults
	}
	if in.ServiceCode != "AmazonEC2" {
		return nil, &apiError{Status: http.StatusBadRequest, Type: "NotFoundException", Msg: "Service " + in.ServiceCode + " is not supported by the local Pricing endpoint"}
	}
	for _, f := range in.Filters {
		if f.Type != "TERM_MATCH" && f.Type != "EQUALS" {
			return nil, invalidParameter("Filter type %s is not supported by the local Pricing endpoint (TERM_MATCH, EQUALS)", f.Type)
		}
		if f.Field == "" || f.Value == "" {
			return nil, invalidParameter("A filter needs a Field and a Value")
		}
	}
	start := 0
	if in.NextToken != "" {
		n, err := decodeToken(in.NextToken)
		if err != nil || n > len(s.products) {
			return nil, &apiError{Status: http.StatusBadRequest, Type: "InvalidNextTokenException", Msg: "The next token is invalid"}
		}
		start = n
	}
	out := &getProductsOutput{FormatVersion: "aws_v1", PriceList: []string{}}
	for i := start; i < len(s.products); i++ {
		if !matches(s.products[i].attrs, in.Filters) {
			continue
		}
		if len(out.PriceList) == max {
			out.NextToken = encodeToken(i)
			break
		}
		out.PriceList = append(out.PriceList, s.products[i].doc)
	}
	return out, nil
}

// matches applies TERM_MATCH filters: the attribute (field names are not
// case-sensitive) equals the value, ignoring case.
func matches(attrs map[string]string, filters []struct{ Type, Field, Value string }) bool {
	for _, f := range filters {
		v, ok := attrs[f.Field]
		if !ok {
			for k, av := range attrs {
				if strings.EqualFold(k, f.Field) {
					v, ok = av, true
					break
				}
			}
		}
		if !ok || !strings.EqualFold(v, f.Value) {
			return false
		}
	}
	return true
}

func encodeToken(i int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("products:" + strconv.Itoa(i)))
}

func decodeToken(t string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil {
		return 0, err
	}
	rest, ok := strings.CutPrefix(string(b), "products:")
	if !ok {
		return 0, fmt.Errorf("not a token")
	}
	return strconv.Atoi(rest)
}

func writeError(w http.ResponseWriter, e *apiError) { serve.WriteJSONError(w, e, "Message") }

// Request is one API request the endpoint received, as recorded once
// SetRecording(true) is called; Operation is "GetProducts".
type Request = reqlog.Call

func (s *Server) record(r *http.Request, op string) {
	s.Record(func() Request { return reqlog.NewCall(r, op) })
}
