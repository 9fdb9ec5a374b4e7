package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

// warnPasswordFlag prints one line when --password (or --sentinel-password) was given: every user of the machine can
// read a process's arguments (ps, /proc/PID/cmdline), as redis-cli warns for -a.
func warnPasswordFlag(c *cobra.Command, f *Factory) {
	if c.Flags().Changed("password") && f.Conn.Password != "" {
		fmt.Fprintln(f.IO.ErrOut, "warning: --password on the command line is visible to other users (ps); use REDISCLI_AUTH or --password-file instead")
	}
	if c.Flags().Changed("sentinel-password") && f.Conn.SentinelPassword != "" {
		fmt.Fprintln(f.IO.ErrOut, "warning: --sentinel-password on the command line is visible to other users (ps); use --sentinel-password-file instead")
	}
}
