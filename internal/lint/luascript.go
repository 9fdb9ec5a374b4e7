package lint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// luaScriptParameter is a StackExchange.Redis LuaScript parameter: @ and a member's name.
var luaScriptParameter = regexp.MustCompile(`@([A-Za-z_][A-Za-z0-9_]*)`)

// luaScriptHint says how to lint a script written for StackExchange.Redis's LuaScript, whose
// @name parameters are no Lua: LuaScript.Prepare rewrites each into ARGV[i], numbered in the
// order each name first appears. It is "" when the source has no such parameter.
func luaScriptHint(lines []string) string {
	var names []string
	for _, line := range lines {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i] // a comment names no parameter
		}
		for _, m := range luaScriptParameter.FindAllStringSubmatch(line, -1) {
			if !slices.Contains(names, m[1]) {
				names = append(names, m[1])
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	mapping := make([]string, 0, min(len(names), 4))
	for i, n := range names {
		if i == 3 {
			mapping = append(mapping, "...")
			break
		}
		mapping = append(mapping, fmt.Sprintf("@%s is ARGV[%d]", n, i+1))
	}
	return fmt.Sprintf("@name parameters are StackExchange.Redis LuaScript's, not Lua: LuaScript.Prepare rewrites each into ARGV in the order the names first appear (%s), so lint and hammer the script so rewritten",
		strings.Join(mapping, ", "))
}
