# Writes deploy/dashboards/joinery.json (the Grafana dashboard): python3 hack/gen-dashboard.py
# Every query must read metrics the worker serves: go test ./deploy -run TestDashboardAndRulesUseScrapedMetrics
import json
DS = {"type": "prometheus", "uid": "${datasource}"}
panels = []
y = 0
pid = 0
def row(title):
    global y, pid
    pid += 1
    panels.append({"type": "row", "title": title, "id": pid, "collapsed": False, "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
    y += 1
x = 0
rowh = 0
def panel(title, targets, kind="timeseries", unit="short", w=8, h=8, desc=""):
    global x, y, pid, rowh
    if x + w > 24:
        x = 0
        y += rowh
        rowh = 0
    pid += 1
    p = {"type": kind, "title": title, "id": pid, "datasource": DS, "description": desc,
         "gridPos": {"h": h, "w": w, "x": x, "y": y},
         "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
         "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True}, "tooltip": {"mode": "multi", "sort": "desc"}} if kind == "timeseries" else {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}},
         "targets": [{"datasource": DS, "expr": e, "legendFormat": l, "refId": chr(65 + i)} for i, (e, l) in enumerate(targets)]}
    panels.append(p)
    x += w
    rowh = max(rowh, h)
def endrow():
    global x, y, rowh
    y += rowh
    x, rowh = 0, 0

NP = 'nodepool=~"$nodepool"'
row("Capacity")
panel("Nodes by NodePool", [(f'sum by (nodepool) (karpenter_nodepools_usage{{resource_type="nodes",{NP}}})', "{{nodepool}}")],
      desc="status.resources.nodes of each NodePool (karpenter_nodepools_usage)")
panel("CPU used / limit", [(f'karpenter_nodepools_usage{{resource_type="cpu",{NP}}} / karpenter_nodepools_limit{{resource_type="cpu",{NP}}}', "{{nodepool}}")],
      unit="percentunit", desc="Summed node capacity over spec.limits.cpu; 100% and new nodes of the pool are refused")
panel("Memory used / limit", [(f'karpenter_nodepools_usage{{resource_type="memory",{NP}}} / karpenter_nodepools_limit{{resource_type="memory",{NP}}}', "{{nodepool}}")],
      unit="percentunit")
panel("Allocatable CPU", [(f'sum by (nodepool) (karpenter_nodes_allocatable{{resource_type="cpu",{NP}}})', "{{nodepool}} allocatable"),
                          (f'sum by (nodepool) (karpenter_nodes_total_pod_requests{{resource_type="cpu",{NP}}})', "{{nodepool}} requested")], unit="short")
panel("Allocatable memory", [(f'sum by (nodepool) (karpenter_nodes_allocatable{{resource_type="memory",{NP}}})', "{{nodepool}} allocatable"),
                             (f'sum by (nodepool) (karpenter_nodes_total_pod_requests{{resource_type="memory",{NP}}})', "{{nodepool}} requested")], unit="bytes")
panel("Cluster utilization (requests / allocatable)", [('karpenter_cluster_utilization_percent', "{{resource_type}}")], unit="percent")
panel("Pods by phase", [('sum by (phase) (karpenter_pods_state)', "{{phase}}")])
panel("Pods by NodePool and capacity type", [(f'sum by (nodepool, capacity_type) (karpenter_pods_state{{managed="true",{NP}}})', "{{nodepool}} {{capacity_type}}")])
panel("Nodes by instance type", [(f'count by (instance_type) (karpenter_nodes_allocatable{{resource_type="cpu",{NP}}})', "{{instance_type}}")])
endrow()
row("Cost")
panel("Cost per NodePool (USD/hour)", [(f'sum by (nodepool) (karpenter_nodepools_cost_total{{{NP}}})', "{{nodepool}}")], unit="currencyUSD", w=12,
      desc="Summed on-demand or spot price of each pool's nodes (the live spot price of their zone)")
panel("Total cost (USD/hour)", [('sum(karpenter_nodepools_cost_total)', "USD/hour")], kind="stat", unit="currencyUSD", w=6)
panel("Spot share of nodes", [(f'(count(karpenter_nodes_allocatable{{resource_type="cpu",capacity_type="spot",{NP}}}) or vector(0)) / count(karpenter_nodes_allocatable{{resource_type="cpu",{NP}}})', "spot")],
      kind="stat", unit="percentunit", w=6)
endrow()
row("Provisioning")
panel("Pending pods", [('joinery_pods_pending', "pending (Unschedulable, waiting for capacity)"),
                       ('sum(karpenter_scheduler_unschedulable_pods_count)', "unschedulable (no NodePool fits)")])
panel("Provisioning latency (batch start to NodeClaims started)", [
    ('histogram_quantile(0.5, sum by (le) (rate(joinery_provision_duration_seconds_bucket[$__rate_interval])))', "p50"),
    ('histogram_quantile(0.9, sum by (le) (rate(joinery_provision_duration_seconds_bucket[$__rate_interval])))', "p90"),
    ('histogram_quantile(0.99, sum by (le) (rate(joinery_provision_duration_seconds_bucket[$__rate_interval])))', "p99")], unit="s")
panel("Scheduling simulation duration (p99)", [
    ('histogram_quantile(0.99, sum by (le, controller) (rate(karpenter_scheduler_scheduling_duration_seconds_bucket[$__rate_interval])))', "{{controller}}")], unit="s")
panel("Launch duration (CreateFleet, p50 / p90)", [
    ('histogram_quantile(0.5, sum by (le) (rate(karpenter_cloudprovider_duration_seconds_bucket{method="Create"}[$__rate_interval])))', "p50"),
    ('histogram_quantile(0.9, sum by (le) (rate(karpenter_cloudprovider_duration_seconds_bucket{method="Create"}[$__rate_interval])))', "p90")], unit="s")
panel("NodeClaims created / terminated", [
    (f'sum by (nodepool) (increase(karpenter_nodeclaims_created_total{{{NP}}}[$__rate_interval]))', "created {{nodepool}}"),
    (f'sum by (nodepool) (increase(karpenter_nodeclaims_terminated_total{{{NP}}}[$__rate_interval]))', "terminated {{nodepool}}")])
panel("Cloud provider errors (InsufficientCapacityError: no EC2 capacity)", [
    ('sum by (method, error) (increase(karpenter_cloudprovider_errors_total[$__rate_interval]))', "{{method}} {{error}}"),
])
endrow()
row("Disruption")
panel("Disruption decisions", [('sum by (decision, reason, consolidation_type) (increase(karpenter_voluntary_disruption_decisions_total[$__rate_interval]))', "{{decision}} {{reason}} {{consolidation_type}}")])
panel("Eligible nodes", [('sum by (reason) (karpenter_voluntary_disruption_eligible_nodes)', "{{reason}}")])
panel("Nodes not disrupted, by reason", [('sum by (reason) (joinery_disruption_blocked_nodes)', "{{reason}}")],
      desc="joinery_disruption_blocked_nodes: why the last pass left nodes alone (budget, pdb, do_not_disrupt_pod, ...)")
panel("NodeClaims disrupted", [(f'sum by (reason, nodepool) (increase(karpenter_nodeclaims_disrupted_total{{{NP}}}[$__rate_interval]))', "{{reason}} {{nodepool}}")])
panel("Allowed disruptions (budgets)", [(f'karpenter_nodepools_allowed_disruptions{{{NP}}}', "{{nodepool}} {{reason}}")])
panel("Decision evaluation (p90)", [('histogram_quantile(0.9, sum by (le) (rate(karpenter_voluntary_disruption_decision_evaluation_duration_seconds_bucket[$__rate_interval])))', "p90")], unit="s")
endrow()
row("Interruption")
panel("Interruption messages", [('sum by (message_type) (increase(karpenter_interruption_received_messages_total[$__rate_interval]))', "{{message_type}}")])
panel("Interruption actions", [('sum by (action_type) (increase(karpenter_interruption_actions_performed[$__rate_interval]))', "{{action_type}}")])
panel("Message age when handled (p90)", [('histogram_quantile(0.9, sum by (le) (rate(karpenter_interruption_message_queue_duration_seconds_bucket[$__rate_interval])))', "p90")], unit="s")
endrow()
row("Temporal workflows and worker")
panel("Workers up", [('sum(up{job=~"$job"})', "up")], kind="stat", w=4)
panel("Workflows completed", [('sum by (workflow_type) (increase(temporal_workflow_completed_total[$__rate_interval]))', "{{workflow_type}}")], w=10)
panel("Workflow task execution latency (p99)", [('max by (workflow_type) (temporal_workflow_task_execution_latency_seconds{quantile="0.99"})', "{{workflow_type}}")], unit="s", w=10)
panel("Workflow end-to-end latency (p95)", [('max by (workflow_type) (temporal_workflow_endtoend_latency_seconds{quantile="0.95"})', "{{workflow_type}}")], unit="s",
      desc="Start to close of each workflow type: a Provision batch, a NodeClaim's whole life, a drain")
panel("Activity execution latency (p95)", [('max by (activity_type) (temporal_activity_execution_latency_seconds{quantile="0.95"})', "{{activity_type}}")], unit="s")
panel("Workflow task schedule-to-start latency (p95)", [('max(temporal_workflow_task_schedule_to_start_latency_seconds{quantile="0.95"})', "workflow tasks")], unit="s",
      desc="Time workflow tasks wait on the task queue: high means too few workers or pollers")
panel("Pollers and task slots", [('sum by (poller_type) (temporal_num_pollers)', "pollers {{poller_type}}"),
                                 ('sum by (worker_type) (temporal_worker_task_slots_available)', "free slots {{worker_type}}")])
panel("Temporal requests", [('sum by (operation) (rate(temporal_request_total[$__rate_interval]))', "{{operation}}"),
                            ('sum(rate(temporal_long_request_total[$__rate_interval]))', "long polls")], unit="reqps")

endrow()

dash = {
    "title": "Joinery", "uid": "joinery", "tags": ["joinery", "karpenter"], "timezone": "utc", "schemaVersion": 39, "version": 1,
    "editable": True, "refresh": "30s", "time": {"from": "now-6h", "to": "now"},
    "description": "Joinery node autoscaler: capacity, cost per NodePool, provisioning latency, disruption, interruptions, Temporal workflow health. Karpenter v1 metric names (karpenter_*), Joinery's (joinery_*) and the Temporal SDK's (temporal_*).",
    "templating": {"list": [
        {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source", "current": {}},
        {"name": "job", "type": "query", "datasource": DS, "query": {"query": "label_values(karpenter_cluster_state_node_count, job)", "refId": "job"},
         "definition": "label_values(karpenter_cluster_state_node_count, job)", "includeAll": True, "allValue": ".*", "multi": True, "refresh": 2, "current": {}},
        {"name": "nodepool", "type": "query", "datasource": DS, "query": {"query": "label_values(karpenter_nodepools_usage, nodepool)", "refId": "nodepool"},
         "definition": "label_values(karpenter_nodepools_usage, nodepool)", "includeAll": True, "allValue": ".*", "multi": True, "refresh": 2, "current": {}},
    ]},
    "annotations": {"list": []},
    "panels": panels,
}
import os
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy", "dashboards", "joinery.json")
with open(out, "w") as f:
    json.dump(dash, f, indent=2)
    f.write("\n")
print(len(panels))
