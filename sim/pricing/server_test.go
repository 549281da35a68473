package pricing

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func call(t *testing.T, s *Server, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("X-Amz-Target", "AWSPriceListService.GetProducts")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s: %v", rec.Body.String(), err)
	}
	return rec.Code, out
}

// GetProducts filters by attribute, pages with NextToken and refuses what
// the API refuses, with its error types.
func TestGetProducts(t *testing.T) {
	s := New(Options{})
	code, out := call(t, s, `{"ServiceCode":"AmazonEC2","MaxResults":2,"Filters":[
		{"Type":"TERM_MATCH","Field":"instanceType","Value":"m5.large"}]}`)
	// m5.large: Used, UnusedCapacityReservation, AllocatedCapacityReservation.
	if code != 200 || len(out["PriceList"].([]any)) != 2 || out["NextToken"] == nil {
		t.Fatalf("%d %v", code, out)
	}
	code, out = call(t, s, `{"ServiceCode":"AmazonEC2","MaxResults":2,"NextToken":"`+out["NextToken"].(string)+`","Filters":[
		{"Type":"TERM_MATCH","Field":"instanceType","Value":"m5.large"}]}`)
	if code != 200 || len(out["PriceList"].([]any)) != 1 || out["NextToken"] != nil {
		t.Fatalf("second page %d %v", code, out)
	}
	var doc struct {
		Product struct {
			Attributes map[string]string `json:"attributes"`
		} `json:"product"`
	}
	if err := json.Unmarshal([]byte(out["PriceList"].([]any)[0].(string)), &doc); err != nil || doc.Product.Attributes["location"] != "US East (N. Virginia)" {
		t.Errorf("document %v %v", doc, err)
	}
	for _, c := range []struct{ body, typ string }{
		{`{"ServiceCode":"AmazonEC2","MaxResults":101}`, "InvalidParameterException"},
		{`{"ServiceCode":"AmazonEC2","MaxResults":0}`, "InvalidParameterException"},
		{`{"ServiceCode":"AmazonEC2","NextToken":"bm9wZQ"}`, "InvalidNextTokenException"},
		{`{}`, "InvalidParameterException"},
		{`{"ServiceCode":"AmazonS3"}`, "NotFoundException"},
		{`{"ServiceCode":"AmazonEC2","FormatVersion":"aws_v2"}`, "InvalidParameterException"},
	} {
		code, out := call(t, s, c.body)
		if code != 400 || out["__type"] != c.typ {
			t.Errorf("%s: %d %v, want 400 %s", c.body, code, out, c.typ)
		}
	}
	s.Refuse("AccessDeniedException")
	if code, out := call(t, s, `{"ServiceCode":"AmazonEC2"}`); code != 400 || out["__type"] != "AccessDeniedException" {
		t.Errorf("refused: %d %v", code, out)
	}
}
