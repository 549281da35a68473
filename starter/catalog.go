package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/sim/world"
	"github.com/spf13/cobra"
)

func newCatalogCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "Work with the instance catalog (export the live one for starter plan --catalog)",
	}
	cmd.AddCommand(newCatalogExportCommand())
	return cmd
}

func newCatalogExportCommand() *cobra.Command {
	var output, admin, region, ec2URL, pricingURL string
	var realAWS bool
	cmd := &cobra.Command{
		Use:   "export -o catalog.csv [--admin-addr host:port | --ec2-endpoint URL --pricing-endpoint URL --region R | --aws --region R]",
		Short: "Write the live catalog (types, zones, on-demand and spot prices) in the CSV starter plan --catalog reads",
		Long: `export reads the catalog the controller plans with, from the same APIs: DescribeInstanceTypes,
DescribeInstanceTypeOfferings (availability zones), DescribeSpotPriceHistory (the newest price per
type and zone) and the Price List API's GetProducts (on-demand prices), and writes it as CSV with
the zones and zonal spot prices, so that starter plan --catalog plans with the region's data.

By default it asks the running starter dev (its admin endpoint) for the local world's endpoints
and region; --ec2-endpoint/--pricing-endpoint/--region name endpoints; --aws reads real AWS in
--region with the usual credentials. An EC2 call that fails stops the export; a failed GetProducts
keeps the embedded on-demand prices (a note says so), as the controller does.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" {
				return fmt.Errorf("-o: the file to write is required (- for stdout)")
			}
			ctx := cmd.Context()
			opts := aws.Options{Region: region, Endpoint: ec2URL, PricingEndpoint: pricingURL, ClusterName: "catalog-export", Key: localKey(ec2URL)}
			switch {
			case realAWS && (ec2URL != "" || pricingURL != ""):
				return fmt.Errorf("--aws reads real AWS: do not also pass --ec2-endpoint or --pricing-endpoint")
			case realAWS:
				if region == "" {
					return fmt.Errorf("--aws needs --region")
				}
			case ec2URL == "":
				eps, err := worldEndpoints(ctx, admin)
				if err != nil {
					return err
				}
				opts.Endpoint, opts.PricingEndpoint = eps.EC2, eps.Pricing
				opts.Key = aws.StaticKey{AccessKeyID: eps.AdminAccessKeyID, SecretAccessKey: eps.AdminSecretAccessKey}
				if opts.Region == "" {
					opts.Region = eps.Region
				}
			}
			cat, notes, err := exportCatalog(ctx, opts)
			if err != nil {
				return err
			}
			for _, n := range notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "note:", n)
			}
			var buf bytes.Buffer
			if err := catalog.WriteCSV(&buf, cat); err != nil {
				return err
			}
			if output == "-" {
				_, err = cmd.OutOrStdout().Write(buf.Bytes())
				return err
			}
			if err := os.WriteFile(output, buf.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d instance types in %d zones (%v)\n", output, len(cat.Types), len(cat.Zones()), cat.Zones())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "", "the CSV file to write (- for stdout)")
	fl.StringVar(&admin, "admin-addr", DefaultAdminAddr, "the admin endpoint of the running `starter dev` (asked for its endpoints and region)")
	fl.StringVar(&region, "region", "", "AWS region (default: the local world's)")
	fl.StringVar(&ec2URL, "ec2-endpoint", "", "EC2 API base URL (instead of asking starter dev)")
	fl.StringVar(&pricingURL, "pricing-endpoint", "", "Price List API base URL (with --ec2-endpoint; empty: the embedded on-demand prices)")
	fl.BoolVar(&realAWS, "aws", false, "read real AWS in --region (credentials from the environment)")
	return cmd
}

// localKey is the key for a local world's endpoint: the environment's
// (AWS_ACCESS_KEY_ID) when set, else the world's public admin key; zero
// for real AWS (the SDK's default chain).
func localKey(endpoint string) aws.StaticKey {
	if endpoint == "" || os.Getenv("AWS_ACCESS_KEY_ID") != "" {
		return aws.StaticKey{}
	}
	return aws.StaticKey{AccessKeyID: world.AdminAccessKeyID, SecretAccessKey: world.AdminSecretAccessKey}
}

// worldEndpoints asks the running starter dev for its endpoints.
func worldEndpoints(ctx context.Context, admin string) (world.Endpoints, error) {
	var eps world.Endpoints
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+"/endpoints", nil)
	if err != nil {
		return eps, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return eps, fmt.Errorf("admin endpoint %s: %w (is `starter dev` running? or pass --ec2-endpoint, or --aws)", admin, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return eps, fmt.Errorf("admin endpoint %s/endpoints: %s: %s", admin, resp.Status, bytes.TrimSpace(b))
	}
	if err := json.Unmarshal(b, &eps); err != nil || eps.EC2 == "" {
		return eps, fmt.Errorf("admin endpoint %s/endpoints: unexpected answer %q", admin, b)
	}
	return eps, nil
}

// exportCatalog reads the live catalog as the controller does: on-demand
// prices (else the embedded ones, noted), instance types, their zones and
// the spot prices.
func exportCatalog(ctx context.Context, o aws.Options) (*catalog.Catalog, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cc, err := aws.New(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	emb, err := catalog.Default()
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	od, err := cc.OnDemandPrices(ctx)
	if err != nil {
		notes = append(notes, "on-demand prices: the embedded us-east-1 prices ("+err.Error()+")")
		od = nil
	}
	types, err := cc.InstanceTypes(ctx, emb)
	if err != nil {
		return nil, nil, err
	}
	kept, unpriced := catalog.PriceTypes(types, od)
	if unpriced > 0 {
		notes = append(notes, fmt.Sprintf("%d instance types left out: no on-demand price", unpriced))
	}
	zones, err := cc.InstanceTypeZones(ctx)
	if err != nil {
		return nil, nil, err
	}
	spot, err := cc.SpotPrices(ctx, time.Now())
	if err != nil {
		return nil, nil, err
	}
	if len(kept) == 0 {
		return nil, nil, fmt.Errorf("no instance type to export")
	}
	return catalog.New(kept).WithMarket(zones, spot), notes, nil
}
