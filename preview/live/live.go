// Package live reads a running cluster for `starter what-if`: the
// controller's own readers (activities) over read-only caches, and the
// market from EC2 when asked; what it reads is a whatif.State, which the
// pure preview/whatif analyses.
package live

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/joinery/joinery/activities"
	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/catalog"
	"github.com/joinery/joinery/policy/disruption"
	"github.com/joinery/joinery/preview/whatif"
	"github.com/joinery/joinery/providers/aws"
	"github.com/joinery/joinery/providers/kube"
	"go.uber.org/zap"
	"k8s.io/client-go/rest"
)

// Source is what a preview reads: a cluster's caches and the market,
// through the controller's own readers (activities).
type Source struct {
	Cluster *kube.Cluster
	Market  *catalog.Market // nil: the embedded catalog's static prices
	acts    *activities.Activities
}

// NewSource reads through the activities built from d.
func NewSource(d activities.Deps) *Source {
	return &Source{Cluster: d.Cluster, Market: d.Market, acts: activities.New(d)}
}

// Preview reads what `starter what-if` needs from the caches, with the
// controller's own readers and writing nothing: the disruption claims as
// the consolidation pass reads them, and the solver input the controller
// would plan over now, once with the cluster's NodePools and once with the
// change's (a change's EC2NodeClass keeps the cluster's class status:
// whatif.MergeClass). Existing nodes carry their price (the live market
// when src.Market has it). The Cluster's Recorder should be nil: an
// invalid do-not-disrupt annotation is then not reported on the pod.
func Preview(src *Source, ch whatif.Change, now time.Time) whatif.State {
	a := src.acts
	st := whatif.State{Now: now, Pools: map[string]disruption.PoolNodes{}, Classes: map[string]*apiv1.EC2NodeClass{}}
	for _, c := range src.Cluster.NodeClasses() {
		st.Classes[c.Name] = c
	}
	st.Claims = a.DisruptionClaims(now)

	pools, invalid := src.Cluster.NodePools()
	for _, b := range invalid {
		st.Notes = append(st.Notes, fmt.Sprintf("NodePool %s in the cluster is not valid, left out: %v", b.Name, b.Err))
	}
	st.Before, _ = a.PlanningInput(now, pools, src.Cluster.NodeClass)

	changed := map[string]*apiv1.EC2NodeClass{}
	for _, c := range ch.NodeClasses {
		live := st.Classes[c.Name]
		changed[c.Name] = whatif.MergeClass(c, live)
		switch {
		case live == nil:
			st.Notes = append(st.Notes, "EC2NodeClass "+c.Name+" is new: its subnets and images are resolved once applied, its NodePools are not planned now")
		case !reflect.DeepEqual(c.Spec.SubnetSelectorTerms, live.Spec.SubnetSelectorTerms) ||
			!reflect.DeepEqual(c.Spec.SecurityGroupSelectorTerms, live.Spec.SecurityGroupSelectorTerms) ||
			!reflect.DeepEqual(c.Spec.AMISelectorTerms, live.Spec.AMISelectorTerms):
			st.Notes = append(st.Notes, "EC2NodeClass "+c.Name+": selector terms changed; what they resolve to is known once applied (nodes drift then if their subnet, security groups or image are no longer selected), planned with the current resolution")
		}
	}
	byName := map[string]*apiv1.NodePool{}
	for _, p := range pools {
		byName[p.Name] = p
	}
	for _, p := range ch.NodePools {
		byName[p.Name] = p
	}
	newPools := make([]*apiv1.NodePool, 0, len(byName))
	for _, p := range byName {
		newPools = append(newPools, p)
	}
	sort.Slice(newPools, func(i, j int) bool { return newPools[i].Name < newPools[j].Name })
	classOf := func(name string) (*apiv1.EC2NodeClass, error) {
		if c, ok := changed[name]; ok {
			return c, nil
		}
		return src.Cluster.NodeClass(name)
	}
	var skipped []kube.InvalidNodePool
	st.After, skipped = a.PlanningInput(now, newPools, classOf)
	for _, b := range skipped {
		st.Notes = append(st.Notes, fmt.Sprintf("NodePool %s not planned: %v", b.Name, b.Err))
	}
	for _, p := range newPools {
		st.Pools[p.Name] = a.PoolNodes(p.Name)
	}
	return st
}

// Options say where `starter what-if` reads the cluster and the
// market from.
type Options struct {
	REST *rest.Config
	// Region and EC2Endpoint, when either is set, read the live market
	// (the zones each type is sold in, spot prices) from EC2 as the
	// controller does; neither: the embedded catalog's static prices.
	Region, EC2Endpoint string
	// Key signs the EC2 calls (the local world's admin key); zero: the
	// SDK's default credential chain.
	Key     aws.StaticKey
	Timeout time.Duration // for the caches and EC2 (0: 2 min)
}

// Open starts read-only caches of the cluster (no Event recorder) and
// returns the Source Preview runs on, with the market read once when the
// Options ask for it, and a function that stops the caches.
func Open(ctx context.Context, o Options) (*Source, func(), error) {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	cl, err := kube.New(o.REST)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	cl.Shutdown() // no Events: a preview writes nothing
	cl.Recorder = nil
	cctx, cancel := context.WithCancel(ctx)
	if err := cl.Start(cctx, o.Timeout); err != nil {
		cancel()
		return nil, nil, err
	}
	cat, err := catalogDefault()
	if err != nil {
		cancel()
		return nil, nil, err
	}
	d := activities.Deps{Cluster: cl, Catalog: cat, ICE: aws.NewICECache(3*time.Minute, nil), Log: zap.NewNop()}
	if o.Region != "" || o.EC2Endpoint != "" {
		region := o.Region
		if region == "" {
			region = "us-east-1"
		}
		cc, err := aws.New(cctx, aws.Options{Region: region, Endpoint: o.EC2Endpoint, ClusterName: "what-if", Key: o.Key})
		if err != nil {
			cancel()
			return nil, nil, fmt.Errorf("aws clients: %w", err)
		}
		mctx, mcancel := context.WithTimeout(cctx, o.Timeout)
		defer mcancel()
		market, err := readMarket(mctx, cc)
		if err != nil {
			cancel()
			return nil, nil, fmt.Errorf("market from EC2: %w", err)
		}
		d.Market = market
	}
	return NewSource(d), cancel, nil
}

func catalogDefault() (*catalog.Catalog, error) { return catalog.Default() }

// readMarket reads the zones of every type and the spot prices once, as
// the controller's market refresher does at start.
func readMarket(ctx context.Context, cc *aws.Client) (*catalog.Market, error) {
	m := catalog.NewMarket()
	zones, err := cc.InstanceTypeZones(ctx)
	if err != nil {
		return nil, err
	}
	m.SetZones(zones)
	prices, err := cc.SpotPrices(ctx, time.Now())
	if err != nil {
		return nil, err
	}
	m.SetSpotPrices(prices)
	return m, nil
}
