// Command starter is Joinery's operator CLI: `starter dev` runs the whole
// local world with the controller in one process.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes scripts can rely on.
const (
	exitOK         = 0
	exitFailed     = 1 // the command failed (message on stderr)
	exitNotSettled = 2 // --until-settled timed out
)

func main() {
	root := &cobra.Command{
		Use:           "starter",
		Short:         "Operate Joinery: run the local world, inspect and steer node lifecycles",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newDevCommand())
	root.AddCommand(newDrainCommand())
	root.AddCommand(newExplainCommand())
	root.AddCommand(newPauseCommand(), newResumeCommand(), newStatusCommand())
	root.AddCommand(newPlanCommand(), newCatalogCommand())
	root.AddCommand(newMigrateCommand())
	root.AddCommand(newWhatIfCommand(), newRecordCommand(), newReplayCommand())
	root.AddCommand(newSimulateCommand())
	root.AddCommand(newCodecServerCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		if e, ok := err.(exitError); ok {
			os.Exit(e.code)
		}
		os.Exit(exitFailed)
	}
}

// exitError carries a specific exit code.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
