package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/scripts"
)

// completeFunc is what cobra calls to complete an argument or a flag's value.
type completeFunc = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// documentCompletionCmd says, on cobra's own completion command, what limitctl completes.
func documentCompletionCmd(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		// Like limitctl's other parents: an unknown shell is a usage error, not a help page.
		c.Args = noArgs
		c.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
		c.Long = `Generate the shell completion script for bash, zsh, fish or powershell. Besides commands
and flags it completes values (script names, --limiter, each of --strategies, --output, ...)
and Lua files; each shell's sub-command says how to load it (limitctl completion bash --help).`
		c.Example = `  source <(limitctl completion bash)
  limitctl completion zsh > "${fpath[1]}/_limitctl"
  limitctl completion fish > ~/.config/fish/completions/limitctl.fish
  limitctl completion powershell | Out-String | Invoke-Expression`
		examples := map[string]string{
			"bash": `  source <(limitctl completion bash)
  limitctl completion bash > /etc/bash_completion.d/limitctl`,
			"zsh": `  source <(limitctl completion zsh)
  limitctl completion zsh > "${fpath[1]}/_limitctl"`,
			"fish": `  limitctl completion fish | source
  limitctl completion fish > ~/.config/fish/completions/limitctl.fish`,
			"powershell": `  limitctl completion powershell | Out-String | Invoke-Expression`,
		}
		for _, shell := range c.Commands() {
			shell.Example = examples[shell.Name()]
		}
	}
}

// fixedCompletion offers a fixed set of values (each may carry a "\tdescription").
func fixedCompletion(values ...string) completeFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// listCompletion completes one value of a comma-separated list: the part after the last comma,
// keeping what comes before it, and leaving out values already in the list. No space follows,
// so another comma can. The values carry no description: bash matches described candidates
// in their %q form, where the comma becomes "\," and no longer matches what was typed.
func listCompletion(values func(c *cobra.Command) []string) completeFunc {
	return func(c *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done, partial := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, partial = toComplete[:i+1], toComplete[i+1:]
		}
		chosen := map[string]bool{}
		for _, v := range strings.Split(done, ",") {
			chosen[strings.TrimSpace(v)] = true
		}
		var out []string
		for _, v := range values(c) {
			if !chosen[v] && strings.HasPrefix(v, partial) {
				out = append(out, done+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// luaFiles completes file names ending in .lua.
func luaFiles(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"lua"}, cobra.ShellCompDirectiveFilterFileExt
}

// completeScriptNames offers the shipped scripts not yet named on the line, with their purpose.
func completeScriptNames(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	named := map[string]bool{}
	for _, a := range args {
		named[a] = true
	}
	var out []string
	for _, s := range scripts.All() {
		if !named[s.Name] {
			out = append(out, s.Name+"\t"+s.Description)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeOneScriptName is completeScriptNames for a command that takes a single name.
func completeOneScriptName(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeScriptNames(c, args, toComplete)
}

// hammerStrategies offers the strategies the --limiter already on the line supports.
func hammerStrategies(c *cobra.Command) []string {
	kind := limiter.Default
	if name, err := c.Flags().GetString("limiter"); err == nil {
		if k, err := limiter.ParseKind(name); err == nil {
			kind = k
		}
	}
	return limiter.Names(kind.Describe().Strategies)
}
