package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

// PricingRegion is the region of the Price List API endpoint a cluster in
// region reads its prices from: the API lives in a few regions only,
// Karpenter's choice (pkg/providers/pricing NewAPI): ap-south-1 for ap-*,
// cn-northwest-1 for cn-*, eu-central-1 for eu-*, else us-east-1.
func PricingRegion(region string) string {
	switch {
	case strings.HasPrefix(region, "ap-"):
		return "ap-south-1"
	case strings.HasPrefix(region, "cn-"):
		return "cn-northwest-1"
	case strings.HasPrefix(region, "eu-"):
		return "eu-central-1"
	}
	return "us-east-1"
}

// OnDemandPrices returns the Linux on-demand price (USD/hour; CNY in
// China) of every instance type in the client's region, from the Price
// List API's GetProducts as Karpenter reads it: serviceCode AmazonEC2,
// regionCode, operatingSystem Linux, preInstalledSw NA, capacitystatus
// Used, marketoption OnDemand, and either tenancy Shared with product
// family "Compute Instance" or, for bare metal, tenancy Dedicated with
// "Compute Instance (bare metal)"; 100 documents a page. A document it
// cannot read is skipped; none at all is an error.
func (c *Client) OnDemandPrices(ctx context.Context) (map[string]float64, error) {
	if c.pricing == nil {
		return nil, errNoPricing
	}
	out := map[string]float64{}
	for _, extra := range [][2]string{{"Shared", "Compute Instance"}, {"Dedicated", "Compute Instance (bare metal)"}} {
		prices, err := c.onDemandPrices(ctx, term("tenancy", extra[0]), term("productFamily", extra[1]))
		if err != nil {
			return nil, err
		}
		for k, v := range prices {
			out[k] = v
		}
	}
	return out, nil
}

// errNoPricing: the client has a local EC2 endpoint and no Pricing one.
var errNoPricing = errors.New("no Pricing endpoint: the EC2 endpoint is local and Options.PricingEndpoint is empty")

func term(field, value string) pricingtypes.Filter {
	return pricingtypes.Filter{Field: aws.String(field), Type: pricingtypes.FilterTypeTermMatch, Value: aws.String(value)}
}

func (c *Client) onDemandPrices(ctx context.Context, extra ...pricingtypes.Filter) (map[string]float64, error) {
	currency := "USD"
	if strings.HasPrefix(c.region, "cn-") {
		currency = "CNY"
	}
	filters := append([]pricingtypes.Filter{
		term("regionCode", c.region), term("serviceCode", "AmazonEC2"), term("preInstalledSw", "NA"),
		term("operatingSystem", "Linux"), term("capacitystatus", "Used"), term("marketoption", "OnDemand"),
	}, extra...)
	out := map[string]float64{}
	p := pricing.NewGetProductsPaginator(c.pricing, &pricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"), Filters: filters, MaxResults: aws.Int32(100),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("pricing GetProducts: %w", err)
		}
		for _, doc := range page.PriceList {
			if name, price, ok := onDemandPrice(doc, currency); ok {
				out[name] = price
			}
		}
	}
	return out, nil
}

// priceDocument is the part of a Price List document the price is in.
type priceDocument struct {
	Product struct {
		Attributes struct {
			InstanceType string `json:"instanceType"`
		} `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// onDemandPrice reads one document: its instance type and a non-zero
// on-demand price in the currency.
func onDemandPrice(doc, currency string) (string, float64, bool) {
	var d priceDocument
	if err := json.Unmarshal([]byte(doc), &d); err != nil || d.Product.Attributes.InstanceType == "" {
		return "", 0, false
	}
	for _, term := range d.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			if p, err := strconv.ParseFloat(dim.PricePerUnit[currency], 64); err == nil && p > 0 {
				return d.Product.Attributes.InstanceType, p, true
			}
		}
	}
	return "", 0, false
}
