package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/keys"
)

// complete asks cobra's hidden __complete command, as the shell scripts do, and returns the
// offered values (descriptions cut off) and the directive.
func complete(t *testing.T, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	r := run(t, append([]string{"__complete"}, args...)...).wantExit(t, 0)
	lines := strings.Split(strings.TrimSuffix(r.out, "\n"), "\n")
	last := lines[len(lines)-1]
	directive, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if !strings.HasPrefix(last, ":") || err != nil {
		t.Fatalf("no directive line in:\n%s", r.out)
	}
	values := []string{}
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		values = append(values, name)
	}
	return values, cobra.ShellCompDirective(directive)
}

func TestCompletionValues(t *testing.T) {
	allScripts := []string{"concurrency_acquire", "fixed_window", "sliding_window", "token_bucket", "sliding_window_counter", "purge_stale"}
	output := []string{"table", "json", "tsv"}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"hammer", "--strategies", "naive,l"}, []string{"naive,lua", "naive,lua-ts-member"}},
		{[]string{"hammer", "--strategies", ""}, []string{"naive", "multi", "watch", "lua", "eval", "function", "lua-ts-member", "custom"}},
		{[]string{"hammer", "--strategies", "w"}, []string{"watch"}},
		{[]string{"hammer", "--strategies", "naive,lua,"}, []string{"naive,lua,multi", "naive,lua,watch", "naive,lua,eval", "naive,lua,function", "naive,lua,lua-ts-member", "naive,lua,custom"}},
		{[]string{"hammer", "--limiter", "token-bucket", "--strategies", "naive,lua-"}, []string{}},
		{[]string{"hammer", "--limiter", "sliding-window", "--strategies", "naive,lua-"}, []string{"naive,lua-ts-member"}},
		{[]string{"hammer", "--limiter", ""}, []string{"concurrency", "fixed-window", "sliding-window", "token-bucket", "sliding-window-counter"}},
		{[]string{"hammer", "--on-error", ""}, []string{"open", "closed"}},
		{[]string{"hammer", "--tui", ""}, []string{"auto", "on", "off"}},
		{[]string{"hammer", "--embedded", ""}, []string{"auto", "redis-server", "memory"}},
		{[]string{"hammer", "--witness", ""}, []string{"local", "redis"}},
		{[]string{"hammer", "--output", ""}, output},
		{[]string{"scripts", "list", "-o", ""}, output},
		{[]string{"-o", ""}, output},
		{[]string{"lint", "-o", ""}, append(output, "sarif", "github")},
		{[]string{"inspect", "--score-unit", ""}, []string{"auto", "s", "ms", "us", "ns"}},
		{[]string{"inspect", "--clock", ""}, []string{"server", "local"}},
		{[]string{"inspect", "--type", ""}, keys.RedisTypes},
		{[]string{"purge", "--score-unit", ""}, []string{"auto", "s", "ms", "us", "ns"}},
		{[]string{"purge", "--clock", ""}, []string{"server", "local"}},
		{[]string{"reset", "--clock", ""}, []string{"server", "local"}},
		{[]string{"reset", ""}, []string{}}, // key names live in Redis
		{[]string{"res"}, []string{"reset"}},
		{[]string{"scripts", "show", ""}, allScripts},
		{[]string{"scripts", "show", "fixed_window", ""}, []string{}},
		{[]string{"scripts", "load", ""}, allScripts},
		{[]string{"scripts", "load", "fixed_window", "token_bucket", ""}, []string{"concurrency_acquire", "sliding_window", "sliding_window_counter", "purge_stale"}},
		{[]string{"scripts", "status", ""}, allScripts},
		{[]string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, directive := complete(t, tt.args...)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("offered %q, want %q", got, tt.want)
			}
			if directive&cobra.ShellCompDirectiveNoFileComp == 0 {
				t.Fatalf("directive %d offers files too", directive)
			}
		})
	}
}

func TestCompletionStrategiesLeaveRoomForAComma(t *testing.T) {
	_, directive := complete(t, "hammer", "--strategies", "naive,")
	if directive&cobra.ShellCompDirectiveNoSpace == 0 {
		t.Fatalf("directive %d adds a space after a strategy", directive)
	}
}

func TestCompletionLuaFiles(t *testing.T) {
	for _, args := range [][]string{{"lint", ""}, {"hammer", "--script", ""}, {"scripts", "load", "--file", ""}, {"scripts", "status", "--file", ""}} {
		got, directive := complete(t, args...)
		if directive != cobra.ShellCompDirectiveFilterFileExt || !reflect.DeepEqual(got, []string{"lua"}) {
			t.Errorf("%q: offered %q with directive %d, want *.lua files", args, got, directive)
		}
	}
}

// TestCompletionScripts generates each shell's script from the built binary.
func TestCompletionScripts(t *testing.T) {
	marks := map[string]string{
		"bash":       "__start_limitctl",
		"zsh":        "#compdef limitctl",
		"fish":       "complete -c limitctl",
		"powershell": "Register-ArgumentCompleter -CommandName 'limitctl'",
	}
	for shell, mark := range marks {
		t.Run(shell, func(t *testing.T) {
			r := execBinary(t, nil, "completion", shell).wantExit(t, 0)
			if !strings.Contains(r.out, mark) || !strings.Contains(r.out, "__complete") {
				t.Fatalf("%s script lacks %q or the __complete call (%d bytes)", shell, mark, len(r.out))
			}
			if r.errOut != "" {
				t.Fatalf("stderr: %s", r.errOut)
			}
		})
	}
	execBinary(t, nil, "completion", "tcsh").wantExit(t, ExitUsage)
}

// TestCompletionInBash sources the generated bash script in a real bash and completes a
// strategy list, as a tab press would: the values come from the binary on PATH.
func TestCompletionInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	if err := os.Symlink(binary(t), filepath.Join(dir, "limitctl")); err != nil {
		t.Fatal(err)
	}
	// Stand-ins for the two bash-completion helpers the script uses outside a real tab press.
	script := `
_get_comp_words_by_ref() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
compopt() { :; }
source <(limitctl completion bash)
try() {
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMP_TYPE=9; COMPREPLY=()
  __start_limitctl
  printf '%s|' "${COMPREPLY[@]%%$'\t'*}"; echo
}
try limitctl hammer --strategies naive,l
try limitctl hammer --limiter fixed-
try limitctl scripts show slid
`
	cmd := exec.Command(bash, "--norc", "-c", script)
	cmd.Env = []string{"PATH=" + dir + ":" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	want := "naive,lua|naive,lua-ts-member|\nfixed-window|\nsliding_window|sliding_window_counter|\n"
	if string(out) != want {
		t.Fatalf("bash completed\n%s\nwant\n%s", out, want)
	}
}
