package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/helptopic"
)

// hammerFlagGroups are hammer's flags as --help groups them, each under the topic that explains
// it; every visible flag is in one (the Connection group: the inherited flags no other names).
var hammerFlagGroups = []helptopic.Group{
	{Name: "Limiter", Topic: "limiter-file", Flags: []string{"limiter-file", "print-limiter", "limiter", "limit", "window", "hold", "stale-after", "assert"}},
	{Name: "Custom script", Topic: "contract", Flags: []string{"script", "script-keys", "script-args", "script-allowed", "script-admit-at", "clock",
		"window-start", "script-release", "script-release-file", "script-release-keys", "script-release-args", "script-setup", "script-setup-file", "no-lint"}},
	{Name: "Load", Topic: "connections", Flags: []string{"strategies", "workers", "duration", "requests", "max-duration", "max-requests", "rate", "conns", "keys", "profile", "skew",
		"abandon", "on-error", "inject", "embedded"}},
	{Name: "HTTP target", Topic: "http", Flags: []string{"http", "http-method", "http-header", "http-body", "http-admitted", "http-refused", "http-keys",
		"http-redis-trace", "http-redis-proxy", "http-demo"}},
	{Name: "Shared run", Topic: "evidence", Flags: []string{"run-id", "witness", "evidence-max-mib"}},
	{Name: "Output and CI", Topic: "exit-codes", Flags: []string{"output", "tui", "report", "junit", "no-color", "prefix", "keep-keys", "record"}},
	{Name: "Connection", Topic: "connections"},
}

func flagGroups(c *cobra.Command, groups []helptopic.Group) helptopic.Groups {
	return helptopic.Groups{List: groups, Local: c.LocalFlags(), Inherited: c.Root().PersistentFlags()}
}

// groupedUsage is a command's usage with its flags in groups, each its flags' names on a line
// or two under the topic that explains them: every flag found on a screen, explained once.
func groupedUsage(groups []helptopic.Group) func(c *cobra.Command) error {
	return func(c *cobra.Command) error {
		w := c.OutOrStderr()
		fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				fmt.Fprintf(w, "  %s  (limitctl %s --help)\n", sub.UseLine(), strings.TrimPrefix(sub.CommandPath(), "limitctl "))
			}
		}
		fmt.Fprintf(w, "\nExamples:\n%s\n\nFlags (what each does: limitctl help TOPIC):\n%s\n", c.Example, strings.Join(flagGroups(c, groups).Lines(), "\n"))
		return nil
	}
}

// addHelpTopics adds the help topics (limitctl help TOPIC) to root: each topic's text, then
// the flags of every group of command that names it, with their usage.
func addHelpTopics(root, command *cobra.Command, groups []helptopic.Group) {
	for _, topic := range helptopic.Topics {
		root.AddCommand(&cobra.Command{Use: topic.Name, Short: topic.Short, Long: helptopic.Text(topic.Name, flagGroups(command, groups).Usage(topic.Name))})
	}
}
