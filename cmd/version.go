package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/buildinfo"
	"github.com/limitctl/limitctl/internal/tableprint"
)

func newVersionCmd(f *Factory, runF func(*Factory) error) *cobra.Command {
	if runF == nil {
		runF = runVersion
	}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and Go version",
		Long: `Prints the version, the commit and its date, and the Go version the binary was built with.
A release build carries them from the build flags; a go install build reads them from the
module version and the build's VCS stamp, and says unknown for what neither holds.`,
		Example: `  limitctl version
  limitctl version -o json`,
		Args:              noArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              func(c *cobra.Command, args []string) error { return runF(f) },
	}
}

func runVersion(f *Factory) error {
	v := buildinfo.Resolve(f.Build)
	if f.Output == tableprint.FormatJSON {
		return writeJSON(f.IO.Out, v)
	}
	_, err := fmt.Fprint(f.IO.Out, v)
	return err
}
