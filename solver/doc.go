// Package solver decides where pending pods go: onto existing nodes, onto
// new NodeClaims with a price-ordered set of instance types, or nowhere
// (with the reason). It is pure: no I/O and no map-order dependence. The
// default search (a zero Input.Budget) and the whole search (negative) are
// deterministic, the same Input giving the same Plan; under a time budget
// what the budget cuts off depends on the machine's speed. [LowerBound] bounds the cost of any plan
// for the same pods, and [SimulateRemoval] answers consolidation's "can
// these nodes go, and what would replace them". The design is described
// in docs/design/solver.md.
//
// # The greedy pass
//
// Packing is first-fit decreasing: pods by cpu, then memory (descending),
// older first, then namespace/name. Each pod goes to the first existing
// node, by name, that fits it; else to the least-loaded NodeClaim already
// opened in this plan whose remaining instance-type set can still hold it
// (the set narrows to the types that fit every pod on the claim, as in
// Karpenter); else to a new NodeClaim from the highest-weight NodePool that
// can take the pod (weight is strict priority, ties by name). A claim
// launches as one of its MaxInstanceTypes cheapest surviving types and
// counts against NodePool limits by their largest capacity; limits are
// re-checked whenever a claim's set changes, so no pool limit is exceeded
// whichever type is launched. Each claim's price is its cheapest surviving
// offering, so a claim that ends half full falls back to a smaller type.
//
// # Cost rules and the strategy search
//
// A claim that keeps every type that fits grows until its largest type is
// full, whatever that costs. Two rules, Joinery's rather than Karpenter's,
// bound this: the upsize rule (a pod may force the claim's cheapest type to
// a pricier one only if the USD/hour per unit of the load's dominant
// resource gets worse by at most [Strategy].UpsizeTolerance) and the size
// cap (a new claim keeps only types up to [Strategy].VCPUCap vCPUs); an
// ordinary pod also may not grow an accelerator claim's price. Which
// tolerance and cap are cheapest depends on the batch, so Solve packs it
// once per strategy (Input.Strategies, default [DefaultStrategies]) and
// keeps the best plan: fewest unschedulable pods, then lowest total
// USD/hour, then fewest nodes, then the earliest strategy. When the batch
// mixes pod classes (accelerator pods, pods of differently tainted pools),
// a mixed pass takes each class's cheapest strategy among the plain passes
// (classes rarely share nodes), and one round of coordinate search
// follows: for each class in turn, other
// strategies for that class alone, the rest fixed, keeping any plan better
// by the same ordering.
//
// # LP-guided passes
//
// First-fit decreasing packs each class apart, while the cheapest plans of
// mixed batches mix them on large nodes. For mixed batches Solve therefore
// solves the configuration LP of the lower bound (stopped near its bound)
// and turns its solution into seeds: ⌊x_c⌋ claims per configuration c (an
// instance type of a pool with so many pods of each group). Each strategy
// also runs seeded: the seeds' claims open first, each through the
// ordinary open by a pod whose highest-weight pool is the configuration's,
// and their other pods join round robin through the ordinary add, so every
// scheduling constraint and limit is checked; only the cost rules are off
// for seeds. What the seeds do not take is packed by the greedy. Seeded
// passes compete with the others by the same ordering, and the per-class
// search continues from the best pass. The LP solves on a goroutine of its
// own from the start, beside the passes that do not need it; the passes
// are offered in a fixed order, so the plan does not depend on when it
// finishes. Input.DisableLPGuided turns these passes off.
//
// # The time budget
//
// Solve is anytime, bounded by Input.Budget (positive: a time budget;
// negative: none). The first pass always runs to the end; the LP seeds,
// the seeded passes, the other plain passes and the per-class search
// follow, each replacing the best plan only when better, until the budget
// is spent, every pass has run, or the plan costs no more than the LP's
// lower bound. A pass or LP cut off by the deadline is dropped, so Solve
// returns at most a few milliseconds late. The default, zero
// ([DefaultBudget]), counts passes instead of time: a fixed subset of the
// whole search's passes (search.runSchedule lists them, without the
// per-class search), which on 44 of 45 mixed batches of 10,000 pods planned what the
// whole search did (0.01% above on the other) at about half its work, the same plan on any machine
// (a wall-clock backstop of 20 s guards inputs far larger).
//
// # The lower bound
//
// [LowerBound] is a lower bound, in USD/hour, on the new nodes of any plan
// that places every pod this solver can place on new capacity: the larger
// of two bounds, each valid on its own.
//
// The configuration LP (Gilmore and Gomory 1961) groups pods by requests
// and most relaxed scheduling constraints. A bin is an instance type of a
// pool at a price level (the cheapest compatible offering for some group);
// it holds the groups priced at or below that level within the type's
// usable resources. Its dual is solved by column generation: a dense
// simplex over the configurations found so far (package internal/lp) gives
// duals y, and each bin's pricing problem, a bounded knapsack, is solved by
// its LP relaxation, an exact dynamic program over the capacity grid or
// branch and bound (package internal/knapsack); the duals are smoothed
// towards the best so far (Wentges 1997). NodePool limits are rows of the
// LP (a pool's nodes count at most what is left of each limit), with
// multipliers μ ≥ 0. The bound does not rely on the LP converging: for any
// y, μ ≥ 0 and upper bounds U_b(y) on every bin's knapsack optimum, every
// plan costs at least (Σ_g n_g·y_g − Σ_l rem_l·μ_l) / max_b (U_b(y) −
// μ·a_b)/π_b (Farley 1990), a_b what b's node counts against the limits. Work budgets, not time, bound it, so it is the
// same on every machine; instances too large for the dense master skip it.
//
// The weighted-share bound is the dual of the fractional relaxation: with
// weights λ_t over the resources of each type t, a pod's share of a node
// of type t, priced at t's price, bounds what it costs; λ starts at the
// best uniform vector of a grid and is improved per type by
// exponentiated-gradient ascent on a soft-min relaxation, over plain and
// rounded shares (dual feasible functions, Fekete and Schepers 2001). Its
// y also seeds the configuration LP's smoothing.
//
// Both relax NodePool weights, topology and host ports away (the weighted
// shares also limits): the bound stays valid but may be loose.
package solver
