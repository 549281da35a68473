package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/joinery/joinery/preview/record"
	"github.com/spf13/cobra"
)

// recordFlags are `starter record`'s flags.
type recordFlags struct {
	kubeconfig, out string
	duration        time.Duration
	anonymize       bool
	salt            string
}

// newRecordCommand is `starter record`: a read-only capture of a cluster's
// workload and capacity over a window, for a replay on the local world.
func newRecordCommand() *cobra.Command {
	var f recordFlags
	cmd := &cobra.Command{
		Use:   "record -o recording.json [--duration 1h] [--anonymize]",
		Short: "Record a cluster's pods, controllers, nodes, NodePools and PDBs over a window (read-only) for a replay",
		Long: `record lists the cluster's pods (owners, requests, scheduling constraints), Deployments,
ReplicaSets, StatefulSets, DaemonSets, Jobs, Nodes, Karpenter NodePools and EC2NodeClasses,
PodDisruptionBudgets, PriorityClasses, StorageClasses, PVs and PVCs, then watches them for
--duration (or until interrupted) and writes one file: the objects at the start and every change
with its time (format: docs/recording.md). It only reads; what it cannot list or watch is named
in the file's "skipped" list and on stderr. Container images, commands, environments and
annotations (but the disruption ones) are never recorded. --anonymize hashes every name,
namespace and label value (the same value to the same hash, so the replay still matches them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRecord(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", defaultKubeconfig(), "kubeconfig (default $KUBECONFIG, else the local world's)")
	fl.StringVarP(&f.out, "output", "o", "", "the recording file to write (required; gzipped when it ends in .gz)")
	fl.DurationVar(&f.duration, "duration", time.Hour, "how long to watch after the first list")
	fl.BoolVar(&f.anonymize, "anonymize", false, "hash names, namespaces and label values")
	fl.StringVar(&f.salt, "salt", "", "the hash's salt with --anonymize (default: random, so hashes cannot be looked up)")
	return cmd
}

func runRecord(cmd *cobra.Command, f recordFlags) error {
	if f.out == "" {
		return fmt.Errorf("-o FILE is required")
	}
	if f.duration < 0 {
		return fmt.Errorf("--duration must not be negative")
	}
	_, dc, err := kubeClients(f.kubeconfig)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, f.duration)
	defer cancel()
	errw := cmd.ErrOrStderr()
	fmt.Fprintf(errw, "recording for %s (Ctrl-C ends it early)\n", f.duration)
	rec := record.Record(ctx, dc, record.Options{Progress: func(kind string, n int) { fmt.Fprintf(errw, "  %-22s %d\n", kind, n) }})
	for _, s := range rec.Skipped {
		fmt.Fprintf(errw, "skipped %s %s: %s\n", s.Kind, s.Name, s.Reason)
	}
	if f.anonymize {
		salt := f.salt
		if salt == "" {
			b := make([]byte, 16)
			_, _ = rand.Read(b)
			salt = hex.EncodeToString(b)
		}
		record.Anonymize(rec, salt)
	}
	if err := record.WriteFile(f.out, rec); err != nil {
		return err
	}
	fmt.Fprintf(errw, "wrote %s: %d objects, %d changes over %s\n", f.out, len(rec.Objects), len(rec.Events), rec.End.Sub(rec.Start).Round(time.Second))
	return nil
}
