package main

import (
	"fmt"
	"io"

	"github.com/joinery/joinery/preview/planner"
	"github.com/joinery/joinery/starter/migrate"
	"github.com/spf13/cobra"
)

// newMigrateCommand is `starter migrate`: Karpenter v1beta1 NodePools and
// EC2NodeClasses to v1, offline (package migrate has the rules).
func newMigrateCommand() *cobra.Command {
	var files []string
	var output, kubeconfig string
	var fromCAS bool
	var cas casMigration
	cmd := &cobra.Command{
		Use:   "migrate -f old.yaml [-f more.yaml] [-o yaml|json] | migrate --from-cluster-autoscaler [--cluster-name NAME]",
		Short: "Convert Karpenter v1beta1 NodePools and EC2NodeClasses to v1: the result on stdout, every change on stderr",
		Long: `Converts karpenter.sh/v1beta1 NodePools and karpenter.k8s.aws/v1beta1 EC2NodeClasses to v1
following Karpenter's v1 migration rules, and cleans v1 objects read back from a cluster (status,
server fields, Karpenter's compatibility annotations). Other documents pass through unchanged.

The converted documents go to stdout; stderr has one line per change (object: field: old -> new),
then notes. What cannot be converted is listed by object, field and reason, nothing is written to
stdout, and the exit code is 1. Comments and key order are not kept. Give every NodePool and
EC2NodeClass that share a class together: kubelet settings move from the NodePools to their class.`,
		Example: "  go run ./starter migrate -f v1beta1.yaml > v1.yaml\n  go run ./starter migrate --from-cluster-autoscaler --cluster-name prod-eks > nodepools.yaml",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "yaml" && output != "json" {
				return fmt.Errorf("-o must be yaml or json, not %q", output)
			}
			if fromCAS {
				if len(files) > 0 {
					return fmt.Errorf("--from-cluster-autoscaler reads the cluster: give no -f")
				}
				kc, _, err := kubeClients(kubeconfig)
				if err != nil {
					return err
				}
				cas.output = output
				return cas.run(cmd.Context(), kc, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if len(files) == 0 {
				return fmt.Errorf("at least one -f manifest file is required")
			}
			docs, errs := planner.ReadFiles(files...)
			if len(errs) > 0 {
				return fmt.Errorf("bad manifests:\n%s", errs.Error())
			}
			inputs := make([]migrate.Input, len(docs))
			for i, d := range docs {
				inputs[i] = migrate.Input{File: d.File, Doc: d.Index, Object: d.Obj.Object}
			}
			return writeMigration(cmd.OutOrStdout(), cmd.ErrOrStderr(), migrate.Convert(inputs), output)
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file (repeatable; multi-document YAML)")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "yaml (multi-document) or json (a v1 List)")
	cmd.Flags().BoolVar(&fromCAS, "from-cluster-autoscaler", false, "propose NodePools for the cluster's node groups (reads the cluster, changes nothing)")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", defaultKubeconfig(), "kubeconfig of the cluster (--from-cluster-autoscaler)")
	cmd.Flags().StringVar(&cas.cluster, "cluster-name", "my-cluster", "cluster name for the EC2NodeClass's role and discovery tag (--from-cluster-autoscaler)")
	cmd.Flags().StringArrayVar(&cas.groupLabels, "group-label", nil, "node label naming a node's group (repeatable; default eks.amazonaws.com/nodegroup, alpha.eksctl.io/nodegroup-name)")
	return cmd
}

func writeMigration(stdout, stderr io.Writer, r migrate.Result, output string) error {
	if len(r.Refusals) > 0 {
		for _, x := range r.Refusals {
			fmt.Fprintln(stderr, "cannot convert:", x.Error())
		}
		return fmt.Errorf("%d refused; nothing written", len(r.Refusals))
	}
	var out []byte
	var err error
	if output == "json" {
		out, err = r.JSON()
	} else {
		out, err = r.YAML()
	}
	if err != nil {
		return err
	}
	for _, c := range r.Changes {
		fmt.Fprintln(stderr, c)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	fmt.Fprintf(stderr, "%s, %s\n", plural(len(r.Objects), "object"), plural(len(r.Changes), "change"))
	_, err = stdout.Write(out)
	return err
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
