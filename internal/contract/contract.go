// Package contract is the calling contract of a limiter script the user already has: which
// KEYS and ARGV it takes (templates with placeholders), how its reply says "admitted" (a Lua
// expression), how a concurrency slot is released, and whose clock the script uses. Everything
// is compiled once, before any load; expanding a call and judging its reply are cheap.
package contract

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Clock is where a script's time comes from.
type Clock string

const (
	// ClientClock: the hammer passes its time in KEYS/ARGV; evidence uses that time.
	ClientClock Clock = "client"
	// ServerClock: the script reads TIME; evidence uses each call's [sent, replied] interval.
	ServerClock Clock = "server"
)

// The flags, named in errors.
const (
	FlagKeys    = "--script-keys"
	FlagArgs    = "--script-args"
	FlagAllowed = "--script-allowed"
	FlagRelease = "--script-release"
	FlagClock   = "--clock"
)

// NoRelease is the --script-release value of limiters that release by expiry.
const NoRelease = "none"

// Spec is the contract as text: flag values, or a limiter's shipped defaults. An empty field
// takes the default; a blank one (only spaces) is a template of no words.
type Spec struct {
	Keys, Args, Allowed, Release string
	Clock                        string // "", client or server; "" picks by the templates
}

// Contract is a compiled Spec.
type Contract struct {
	Spec    Spec // as given, with defaults filled in and Clock resolved
	Keys    *Template
	Args    *Template
	Allowed *Allowed
	Release *Template // nil with --script-release none
	Clock   Clock
}

// Compile checks and compiles every part of spec; an empty field takes the default's value.
// Every error names its flag and, where there is one, the column.
func Compile(spec, defaults Spec) (*Contract, error) {
	fill := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	spec.Keys = fill(spec.Keys, defaults.Keys)
	spec.Args = fill(spec.Args, defaults.Args)
	spec.Allowed = fill(spec.Allowed, fill(defaults.Allowed, DefaultAllowed))
	spec.Release = fill(spec.Release, fill(defaults.Release, NoRelease))
	c := &Contract{}
	var err error
	if c.Keys, err = Parse(FlagKeys, spec.Keys); err != nil {
		return nil, err
	}
	if c.Keys.Len() == 0 {
		return nil, &Error{Flag: FlagKeys, Msg: "no key: give at least one, e.g. '{key}'"}
	}
	for i := range c.Keys.words {
		// Each key is this run's own: the hammer must never write a key it did not create, and on
		// a cluster every key of one call shares {key}'s hash tag.
		if text, ok := c.Keys.literalWord(i); ok && text == "" {
			continue // an empty key name, as some libraries pass for an unused optional key
		}
		if !c.Keys.wordUsesKey(i) {
			return nil, &Error{Flag: FlagKeys, Msg: fmt.Sprintf("key %d must contain {key} (the run's own key, hash-tagged), e.g. '{key}:suffix'", i+1)}
		}
	}
	if c.Args, err = Parse(FlagArgs, spec.Args); err != nil {
		return nil, err
	}
	for _, t := range []*Template{c.Keys, c.Args} {
		if t.usesPlaceholder(phReply) {
			return nil, &Error{Flag: t.flag, Msg: "{reply} is the acquire's reply: only --script-release may pass it"}
		}
	}
	if c.Allowed, err = CompileAllowed(FlagAllowed, spec.Allowed); err != nil {
		return nil, err
	}
	if strings.TrimSpace(spec.Release) != NoRelease {
		if c.Release, err = Parse(FlagRelease, spec.Release); err != nil {
			return nil, err
		}
		if c.Release.Len() == 0 {
			return nil, &Error{Flag: FlagRelease, Msg: "empty: give a command such as 'ZREM {key} {member}', or none"}
		}
		if name, ok := c.Release.literalWord(0); !ok || name == "" {
			return nil, &Error{Flag: FlagRelease, Column: 1, Msg: "the first word must be a command name"}
		}
		if c.Release.usesPlaceholder(phSlot) {
			return nil, &Error{Flag: FlagRelease, Msg: "{slot} repeats a key or argument per slot; to release the slot taken, pass {reply} (the acquire's reply)"}
		}
	}
	switch Clock(spec.Clock) {
	case "":
		c.Clock = ServerClock
		if c.Keys.UsesClientTime() || c.Args.UsesClientTime() {
			c.Clock = ClientClock
		}
	case ClientClock, ServerClock:
		c.Clock = Clock(spec.Clock)
	default:
		return nil, &Error{Flag: FlagClock, Msg: fmt.Sprintf("want client or server, got %q", spec.Clock)}
	}
	spec.Clock = string(c.Clock)
	c.Spec = spec
	return c, nil
}

// UsesMember reports whether a call needs a fresh request id.
func (c *Contract) UsesMember() bool {
	return c.Keys.UsesMember() || c.Args.UsesMember() || (c.Release != nil && c.Release.UsesMember())
}

// ReleaseUsesReply reports whether the release passes the acquire's reply ({reply}).
func (c *Contract) ReleaseUsesReply() bool {
	return c.Release != nil && c.Release.usesPlaceholder(phReply)
}

// Bind folds the run's static values in, ready for calls.
func (c *Contract) Bind(s Static) *Caller {
	b := &Caller{c: c, keys: c.Keys.Bind(s), args: c.Args.Bind(s), statics: staticArgs(s)}
	if c.Release != nil {
		b.release = c.Release.Bind(s)
	}
	return b
}

// Caller expands a bound contract per call. It is safe for concurrent use.
type Caller struct {
	c                   *Contract
	keys, args, release *Bound
	statics             []lua.LValue // the run's fixed values, for --script-allowed
}

// Contract is what the caller was bound from.
func (b *Caller) Contract() *Contract { return b.c }

// Expand returns the KEYS and ARGV of one call.
func (b *Caller) Expand(call *Call) (keys []string, args []any) {
	v := values{call: call, windowMs: b.keys.windowMs}
	keys = b.keys.appendStrings(make([]string, 0, b.keys.Len()), &v)
	args = b.args.appendAny(make([]any, 0, b.args.Len()), &v)
	return keys, args
}

// ReleaseCommand returns the release command's words for a call, or nil without a release.
func (b *Caller) ReleaseCommand(call *Call) []any {
	if b.release == nil {
		return nil
	}
	v := values{call: call, windowMs: b.release.windowMs}
	return b.release.appendAny(make([]any, 0, b.release.Len()), &v)
}

// Allowed judges one reply.
func (b *Caller) Allowed(reply any) (bool, error) { return b.c.Allowed.eval(reply, b.statics) }
