package helptopic

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/exitcode"
)

// Command is the help command: help for a command or a topic, as cobra's own, except that a
// name that is neither is a usage error (exit 2) naming it, where cobra's printed the root's
// help and exited 0, and a script checking `limitctl help TOPIC` could not tell.
func Command() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command | topic]",
		Short: "Help about any command or topic",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return exitcode.Usagef("unknown help topic %q: limitctl help lists the commands and topics", strings.Join(args, " "))
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}
