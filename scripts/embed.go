// Package scripts holds the Lua scripts limitctl runs on Redis, embedded byte for byte,
// so the SHA1 the tool prints is the SHA1 Redis answers to SCRIPT LOAD.
package scripts

import (
	"bytes"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/limitctl/limitctl/internal/exitcode"
)

var (
	//go:embed concurrency_acquire.lua
	ConcurrencyAcquire string
	//go:embed fixed_window.lua
	FixedWindow string
	//go:embed sliding_window.lua
	SlidingWindow string
	//go:embed token_bucket.lua
	TokenBucket string
	//go:embed sliding_window_counter.lua
	SlidingWindowCounter string
	//go:embed purge_stale.lua
	PurgeStale string
)

// Script is one shipped script and its calling contract.
type Script struct {
	Name        string   `json:"name"`
	Source      string   `json:"-"`
	Keys        []string `json:"keys"`
	Args        []string `json:"args"`
	Description string   `json:"description"`
	// Limiter is true for the rate-limiter scripts, which also ship as Functions.
	Limiter bool `json:"-"`
}

// SHA1 is the hex SHA1 of the exact source bytes: the name EVALSHA uses.
func (s Script) SHA1() string { return SHA1(s.Source) }

// MarshalJSON writes the script as scripts list prints it: name, SHA1 and contract.
func (s Script) MarshalJSON() ([]byte, error) {
	type fields Script // the tagged fields, without this method
	return json.Marshal(struct {
		Name string `json:"name"`
		SHA1 string `json:"sha1"`
		fields
	}{s.Name, s.SHA1(), fields(s)})
}

// FunctionName is the name the script is registered under in the limitctl Functions library.
func (s Script) FunctionName() string { return LibraryName + "_" + s.Name }

// SHA1 returns the hex SHA1 of src, as SCRIPT LOAD computes it.
func SHA1(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

var all = []Script{
	{
		Name: "concurrency_acquire", Source: ConcurrencyAcquire, Limiter: true,
		Keys: []string{"set"}, Args: []string{"limit", "now_ms", "stale_after_ms", "member"},
		Description: "take an in-flight slot on a sorted-set semaphore; reclaims members older than stale_after",
	},
	{
		Name: "fixed_window", Source: FixedWindow, Limiter: true,
		Keys: []string{"counter"}, Args: []string{"limit", "window_ms"},
		Description: "count a request on the current window's counter, which expires with its window",
	},
	{
		Name: "sliding_window", Source: SlidingWindow, Limiter: true,
		Keys: []string{"log"}, Args: []string{"limit", "now_ms", "window_ms", "member"},
		Description: "admit at most limit requests in any window_ms, from a log of request times on a sorted set",
	},
	{
		Name: "token_bucket", Source: TokenBucket, Limiter: true,
		Keys: []string{"bucket"}, Args: []string{"rate_per_s", "burst", "now_ms", "cost"},
		Description: "take cost tokens from a bucket refilled at rate_per_s up to burst",
	},
	{
		Name: "sliding_window_counter", Source: SlidingWindowCounter, Limiter: true,
		Keys: []string{"current", "previous"}, Args: []string{"limit", "now_ms", "window_ms"},
		Description: "admit while this window's count plus the previous window's, weighted by the share of it still inside the sliding window, stays below limit",
	},
	{
		Name: "purge_stale", Source: PurgeStale,
		Keys: []string{"set"}, Args: []string{"cutoff", "batch"},
		Description: "ops: remove at most batch members scored at or below cutoff (one short, atomic step of a purge)",
	},
}

// All returns every shipped script, in a stable order.
func All() []Script {
	out := make([]Script, len(all))
	copy(out, all)
	return out
}

// Names returns the names of every shipped script.
func Names() []string {
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.Name
	}
	return names
}

// Lookup finds a script by name.
func Lookup(name string) (Script, error) {
	for _, s := range all {
		if s.Name == name {
			return s, nil
		}
	}
	names := Names()
	sort.Strings(names)
	return Script{}, fmt.Errorf("unknown script %q (known: %s)", name, strings.Join(names, ", "))
}

// LibraryName is the Redis Functions library that carries the limiter scripts.
const LibraryName = "limitctl"

// FunctionsLibrary returns the source of the limitctl Functions library: each limiter script,
// unchanged, as the body of a registered function, so FCALL runs exactly the logic EVALSHA runs.
func FunctionsLibrary() string {
	var b strings.Builder
	b.WriteString("#!lua name=" + LibraryName + "\n")
	for _, s := range all {
		if !s.Limiter {
			continue
		}
		fmt.Fprintf(&b, "\nredis.register_function('%s', function(KEYS, ARGV)\n%s\nend)\n", s.FunctionName(), s.Source)
	}
	return b.String()
}

// ReadFile reads a Lua script named on the command line (--script, --file, lint's files) as
// Redis will get it: binary or empty files are refused (a usage error) before Redis sees them.
func ReadFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", exitcode.Usagef("cannot read script %s: %v", path, UnwrapPathError(err))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "", exitcode.Usagef("script %s is empty", path)
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return "", exitcode.Usagef("%s is not a Lua script: it holds binary data", path)
	}
	return string(b), nil
}

// UnwrapPathError drops the operation and path an *os.PathError repeats.
func UnwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
