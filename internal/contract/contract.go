// Package contract is the calling contract of a limiter script the user already has: which
// KEYS and ARGV it takes (templates with placeholders, arithmetic among them), how its reply
// says "admitted" (a Lua expression), how a concurrency slot is released (a command or a
// script of its own), and whose clock the script uses. Everything is compiled once, before any
// load; expanding a call and judging its reply are cheap.
package contract

import (
	"fmt"
	"slices"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Clock is where a script's time comes from.
type Clock string

const (
	// ClientClock: the hammer passes its time in KEYS/ARGV; evidence uses that time.
	ClientClock Clock = "client"
	// ServerClock: the script reads TIME; evidence uses each call's [sent, replied] interval.
	ServerClock Clock = "server"
	// VirtualClock: the script reads TIME and the hammer answers it with the call's own time,
	// never going back per key (limiter.VirtualClockSource), so the evidence is nearly as exact
	// as with ClientClock.
	VirtualClock Clock = "virtual"
)

// AnswersTime reports whether the hammer answers the script's TIME itself.
func (c Clock) AnswersTime() bool { return c == VirtualClock }

// The flags, named in errors.
const (
	FlagKeys    = "--script-keys"
	FlagArgs    = "--script-args"
	FlagAllowed = "--script-allowed"
	FlagRelease = "--script-release"
	FlagClock   = "--clock"
	// FlagWindowStart says where a fixed window's windows start (WindowStart).
	FlagWindowStart = "--window-start"
	// The release as a script of its own, with its KEYS and ARGV templates.
	FlagReleaseFile = "--script-release-file"
	FlagReleaseKeys = "--script-release-keys"
	FlagReleaseArgs = "--script-release-args"
)

// The release script's templates when none is given: the run's key and the request's id.
const (
	DefaultReleaseKeys = "{key}"
	DefaultReleaseArgs = "{member}"
)

// NoRelease is the --script-release value of limiters that release by expiry.
const NoRelease = "none"

// Spec is the contract as text: what the flags, a limiter file's script (limiterfile) or a
// limiter's shipped defaults say, and, compiled (Contract.Spec), what the JSON prints as a
// strategy's contract. Each field names its flag (tag flag), its field in the file (tag yaml)
// and in the JSON (tag json). An empty field takes the default; a blank one (only spaces) is a
// template of no words (an empty --script-keys calls the script with no KEYS: the keys it builds
// from ARGV are still under {key}).
type Spec struct {
	// File is the script's path (--script), read by the caller.
	File    string `yaml:"file" json:"file,omitempty" flag:"script"`
	Keys    string `yaml:"keys" json:"keys" flag:"script-keys"`
	Args    string `yaml:"args" json:"args" flag:"script-args"`
	Allowed string `yaml:"allowed" json:"allowed" flag:"script-allowed"`
	// AdmitAt (--script-admit-at) reads from the reply when the caller may go, in the run's
	// milliseconds; "" admits at the call's time. With it, Allowed defaults to true: every
	// reply is a slot.
	AdmitAt string `yaml:"admit-at" json:"admit_at,omitempty" flag:"script-admit-at"`
	// Clock is "", client, server or virtual; "" picks by the templates and ReadsTime.
	Clock   string `yaml:"clock" json:"clock,omitempty" flag:"clock"`
	Release string `yaml:"release" json:"release,omitempty" flag:"script-release"`
	// ReleaseFile is --script-release-file, whose source (ReleaseScript, read by the caller) is
	// called with the ReleaseKeys and ReleaseArgs templates; "" releases by Release.
	ReleaseFile string `yaml:"release-file" json:"release_file,omitempty" flag:"script-release-file"`
	ReleaseKeys string `yaml:"release-keys" json:"release_keys,omitempty" flag:"script-release-keys"`
	ReleaseArgs string `yaml:"release-args" json:"release_args,omitempty" flag:"script-release-args"`
	// Setup are the set-up steps in the order given across both flags; Contract.Setup holds
	// them compiled.
	Setup []SetupLine `yaml:"setup" json:"setup,omitempty" flag:"script-setup,script-setup-file"`
	// WindowStart (--window-start) is where a fixed window's windows start, as the limiter's
	// contract states it; "" is epoch when the templates name windows by the epoch's multiples,
	// else any.
	WindowStart WindowStart `yaml:"window-start" json:"window_start,omitempty" flag:"window-start"`

	// ReadsTime says the script reads TIME (lint.ReadsTime): given no {now_*}, its clock is
	// then virtual by default, else server.
	ReadsTime     bool   `yaml:"-" json:"-"`
	ReleaseScript string `yaml:"-" json:"-"`
}

// WindowStart is where a fixed window's windows start: what the contract lets the evidence
// assume (SPEC section 11).
type WindowStart string

const (
	// AnyStart assumes nothing: windows at least a window apart, wherever they begin (epoch-aligned,
	// a grid phased by its first hit, opened by the first call after the last ended, or at a whole
	// second below it). The default where the contract names no window index.
	AnyStart WindowStart = "any"
	// FirstHitStart: a window starts at the call that opened it, the first after the last ended.
	FirstHitStart WindowStart = "first-hit"
	// EpochStart: windows start at multiples of the window from the epoch, as {window_index} implies.
	EpochStart WindowStart = "epoch"
)

// WindowStarts are the values --window-start takes.
var WindowStarts = []WindowStart{AnyStart, FirstHitStart, EpochStart}

// RefusalsUnjudged says why refusals under this contract prove nothing, or "" when they are
// judged. A limiter that answers a later slot may have given one to a call it refuses, or
// handed the room it seems to have now to callers that go later: the refusal judges, which
// look only at the decisions before a refusal, would blame it for refusing with room.
func (s Spec) RefusalsUnjudged() string {
	if s.AdmitAt != "" {
		return "the limiter answers when the caller may go (" + FlagAdmitAt + "), and slots it already handed out for later leave it right to refuse a call that seems to find room"
	}
	if s.Allowed != "" {
		if _, perCall, err := placeholderLocals(FlagAllowed, s.Allowed, false); err == nil && perCall {
			return FlagAllowed + " reads the call's time, so a refused call may hold a later slot the limiter counts"
		}
	}
	return ""
}

// Contract is a compiled Spec.
type Contract struct {
	Spec Spec // with defaults filled in and Clock resolved
	// Given is the Spec as the caller passed it, before defaults: a template it left empty is
	// the limiter's shipped one.
	Given   Spec
	Keys    *Template
	Args    *Template
	Allowed *Allowed
	// AdmitAt is when a reply lets the caller go; nil admits at the call's time.
	AdmitAt *AdmitAt
	Release *Template // nil with --script-release none, or with a release script
	// ReleaseKeys and ReleaseArgs call the release script (Spec.ReleaseScript); nil without one.
	ReleaseKeys, ReleaseArgs *Template
	Clock                    Clock
	// Setup are the set-up steps (ParseSetup, their scripts read by the caller), in the order
	// given: run on every key of the run before its load.
	Setup []*Setup
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
	given := spec
	if spec.AdmitAt != "" && spec.Allowed == "" {
		spec.Allowed = "true" // a schedule's every reply is a slot, unless the user says how it refuses
	}
	spec.Keys = fill(spec.Keys, defaults.Keys)
	spec.Args = fill(spec.Args, defaults.Args)
	spec.Allowed = fill(spec.Allowed, fill(defaults.Allowed, DefaultAllowed))
	c := &Contract{Given: given}
	if spec.ReleaseScript != "" {
		if spec.Release != "" {
			return nil, &Error{Flag: FlagRelease, Msg: "give the release as a command or as " + FlagReleaseFile + ", not both"}
		}
		spec.Release = NoRelease // the release is the script
		spec.ReleaseKeys = fill(spec.ReleaseKeys, DefaultReleaseKeys)
		spec.ReleaseArgs = fill(spec.ReleaseArgs, DefaultReleaseArgs)
	} else if spec.ReleaseKeys != "" || spec.ReleaseArgs != "" {
		flag := FlagReleaseKeys
		if spec.ReleaseKeys == "" {
			flag = FlagReleaseArgs
		}
		return nil, &Error{Flag: flag, Msg: "describes the release script: give " + FlagReleaseFile + " F.lua"}
	}
	spec.Release = fill(spec.Release, fill(defaults.Release, NoRelease))
	var err error
	if c.Keys, err = Parse(FlagKeys, spec.Keys); err != nil {
		return nil, err
	}
	for i := range c.Keys.words {
		// Each key is this run's own: the hammer must never write a key it did not create, and on
		// a cluster every key of one call shares {key}'s hash tag.
		if text, ok := c.Keys.literalWord(i); ok && text == "" {
			continue // an empty key name, as some libraries pass for an unused optional key
		}
		if !c.Keys.wordUses(i, phKey) {
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
	if spec.AdmitAt != "" {
		if c.AdmitAt, err = CompileAdmitAt(FlagAdmitAt, spec.AdmitAt); err != nil {
			return nil, err
		}
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
	if spec.ReleaseScript != "" {
		if err := c.compileReleaseScript(spec); err != nil {
			return nil, err
		}
	}
	switch Clock(spec.Clock) {
	case "":
		switch {
		case c.Keys.UsesClientTime() || c.Args.UsesClientTime():
			c.Clock = ClientClock
		case spec.ReadsTime:
			c.Clock = VirtualClock
		default:
			c.Clock = ServerClock
		}
	case ClientClock, ServerClock, VirtualClock:
		c.Clock = Clock(spec.Clock)
	default:
		return nil, &Error{Flag: FlagClock, Msg: fmt.Sprintf("want client, server or virtual, got %q", spec.Clock)}
	}
	spec.Clock = string(c.Clock)
	if spec.WindowStart, err = c.windowStart(spec.WindowStart); err != nil {
		return nil, err
	}
	c.Spec = spec
	return c, nil
}

// windowStart resolves a given --window-start: "" is epoch where the templates name windows by
// the epoch's multiples, else any. first-hit beside such a template is a contradiction: its keys
// or arguments name each window by the epoch.
func (c *Contract) windowStart(given WindowStart) (WindowStart, error) {
	named := c.namesEpochWindows()
	switch given {
	case "":
		if named {
			return EpochStart, nil
		}
		return AnyStart, nil
	case FirstHitStart:
		if named {
			return "", &Error{Flag: FlagWindowStart, Msg: "first-hit, but the contract passes {window_index}, {prev_window_index} or {window_start_ms}, which name windows by the epoch"}
		}
		return given, nil
	case AnyStart, EpochStart:
		return given, nil
	}
	return "", &Error{Flag: FlagWindowStart, Msg: fmt.Sprintf("want any, first-hit or epoch, got %q", given)}
}

// compileReleaseScript parses the release script's templates. A release key is the run's own
// as the acquire's are, or the acquire's reply: the slot the script answered it took.
func (c *Contract) compileReleaseScript(spec Spec) error {
	var err error
	if c.ReleaseKeys, err = Parse(FlagReleaseKeys, spec.ReleaseKeys); err != nil {
		return err
	}
	if c.ReleaseArgs, err = Parse(FlagReleaseArgs, spec.ReleaseArgs); err != nil {
		return err
	}
	for i := range c.ReleaseKeys.words {
		if text, ok := c.ReleaseKeys.literalWord(i); ok && text == "" {
			continue
		}
		if !c.ReleaseKeys.wordUses(i, phKey) && !c.ReleaseKeys.wordUses(i, phReply) {
			return &Error{Flag: FlagReleaseKeys, Msg: fmt.Sprintf("key %d must contain {key} (the run's own key) or {reply} (the key the acquire answered it took)", i+1)}
		}
	}
	for _, t := range []*Template{c.ReleaseKeys, c.ReleaseArgs} {
		if t.usesPlaceholder(phSlot) {
			return &Error{Flag: t.flag, Msg: "{slot} repeats a key or argument per slot; to release the slot taken, pass {reply} (the acquire's reply)"}
		}
	}
	return nil
}

// releaseTemplates are the templates a release expands: the command, or the script's keys and
// arguments.
func (c *Contract) releaseTemplates() []*Template {
	var out []*Template
	for _, t := range []*Template{c.Release, c.ReleaseKeys, c.ReleaseArgs} {
		if t != nil {
			out = append(out, t)
		}
	}
	return out
}

// UsesMember reports whether a call needs a fresh request id.
func (c *Contract) UsesMember() bool {
	uses := c.Keys.UsesMember() || c.Args.UsesMember()
	for _, t := range c.releaseTemplates() {
		uses = uses || t.UsesMember()
	}
	return uses
}

// ReleaseUsesReply reports whether the release passes the acquire's reply ({reply}).
func (c *Contract) ReleaseUsesReply() bool {
	for _, t := range c.releaseTemplates() {
		if t.usesPlaceholder(phReply) {
			return true
		}
	}
	return false
}

// EpochAligned reports whether a fixed window's windows start at the epoch's multiples of the
// window: the contract names windows so ({window_index}, {prev_window_index} or
// {window_start_ms}), or says so (--window-start epoch). Otherwise their alignment is unknown
// (WindowStart any), or each starts at the call that opened it (first-hit).
func (c *Contract) EpochAligned() bool { return c.Spec.WindowStart == EpochStart }

// FirstHitWindows reports whether the contract states that a fixed window starts at the call that
// opened it (--window-start first-hit), so the evidence may anchor windows at their openers.
func (c *Contract) FirstHitWindows() bool { return c.Spec.WindowStart == FirstHitStart }

// namesEpochWindows reports whether the templates name a fixed window by the epoch's multiples.
func (c *Contract) namesEpochWindows() bool {
	window := func(p placeholder) bool { return p == phWindowIndex || p == phPrevWindowIndex || p == phWindowStartMs }
	return c.Keys.uses(window) || c.Args.uses(window)
}

// Uses reports whether the call's KEYS or ARGV pass any of the named placeholders, alone or
// inside arithmetic ({now_ms + window_ms} uses both).
func (c *Contract) Uses(names ...string) bool {
	named := func(p placeholder) bool { return slices.Contains(names, p.name()) }
	return c.Keys.uses(named) || c.Args.uses(named)
}

// Releases reports whether a call's release runs anything: a command, or a release script
// (not --script-release none, which leaves the slot to expire).
func (c *Contract) Releases() bool { return len(c.releaseTemplates()) > 0 }

// TimeQuantum is how finely the script is told the time: a second when it is given only whole
// seconds ({now_s_int}), else a millisecond (or finer). The evidence judges each call at the time
// the script could know, so a limiter on whole seconds is held to whole seconds.
func (c *Contract) TimeQuantum() time.Duration {
	wholeSeconds := func(p placeholder) bool { return p == phNowSInt }
	finer := func(p placeholder) bool { return p.clientTime() && p != phNowSInt }
	if c.Clock == ClientClock && (c.Keys.uses(wholeSeconds) || c.Args.uses(wholeSeconds)) && !c.Keys.uses(finer) && !c.Args.uses(finer) {
		return time.Second
	}
	return time.Millisecond
}

// FractionQuantum is how coarsely a script may read how far into its window it is, on the
// client's clock: a second when {now_s_int} is passed at all (a script given a finer now too may
// still take the fraction from the whole seconds), else a millisecond. A window's index or start
// ({window_index}, {prev_window_index}, {window_start_ms}) names the window, not the time in it,
// so unlike TimeQuantum it leaves the unit alone: upstash's layout names its counters by the
// window's index and weighs the previous one by the now it is given.
func (c *Contract) FractionQuantum() time.Duration {
	if c.Clock == ClientClock && slices.Contains(c.timePlaceholders(), phNowSInt) {
		return time.Second
	}
	return time.Millisecond
}

// NowQuantum is the unit the script's now is floored to on the client's clock, given the run's
// window: a second for {now_s_int}, the window for {window_index}, {prev_window_index} or
// {window_start_ms} (a concurrency script given them reads a clock that ticks once a window), the
// finest of them when several are passed, and a millisecond when a finer time is passed too
// ({now_ms}, {now_us}, {now_ns}, {now_s}) or none at all. Unlike TimeQuantum it counts a window
// index as a clock: for the limiters that have no window of their own.
func (c *Contract) NowQuantum(window time.Duration) time.Duration {
	if c.Clock != ClientClock {
		return time.Millisecond
	}
	unit := time.Duration(0)
	coarse := func(d time.Duration) {
		if unit == 0 || d < unit {
			unit = d
		}
	}
	for _, p := range c.timePlaceholders() {
		switch p {
		case phNowSInt:
			coarse(time.Second)
		case phWindowIndex, phPrevWindowIndex, phWindowStartMs:
			coarse(max(window, time.Millisecond))
		default:
			coarse(time.Millisecond)
		}
	}
	return max(unit, time.Millisecond)
}

// ClockUnit is the coarsest unit in which the contract tells the script the time or its stale
// time when it tells it nothing finer: a second for a now passed only in seconds ({now_s},
// {now_s_int}) or a stale time passed only as {stale_after_s}; the window for a now passed only
// as a window's index or start; 0 when both are passed to the millisecond or finer. The
// defaults the hammer picks are never finer than it (DefaultStaleAfterFor), so rounding to that
// unit, which a production configuration would not be tuned against, never makes a correct
// limiter fail.
func (c *Contract) ClockUnit(window time.Duration) time.Duration {
	var unit time.Duration
	if c.Clock == ClientClock {
		now := time.Duration(0)
		for _, p := range c.timePlaceholders() {
			d := time.Duration(0) // finer than a second: no unit
			switch p {
			case phNowS, phNowSInt:
				d = time.Second
			case phWindowIndex, phPrevWindowIndex, phWindowStartMs:
				d = window
			}
			if d == 0 {
				now = 0
				break
			}
			if now == 0 || d < now {
				now = d
			}
		}
		unit = now
	}
	if c.Uses("stale_after_s") && !c.Uses("stale_after_ms") {
		unit = max(unit, time.Second)
	}
	return unit
}

// timePlaceholders are the client-time placeholders the call's KEYS and ARGV pass, alone or
// inside arithmetic, each once.
func (c *Contract) timePlaceholders() []placeholder {
	var out []placeholder
	for p := phNowMs; p <= phWindowStartMs; p++ {
		if c.Keys.usesPlaceholder(p) || c.Args.usesPlaceholder(p) {
			out = append(out, p)
		}
	}
	return out
}

// Bind folds the run's static values in, ready for calls. It fails only on arithmetic that
// divides by a fixed value of zero.
func (c *Contract) Bind(s Static) (*Caller, error) {
	b := &Caller{c: c, statics: staticArgs(s), windowMs: max(1, s.Window.Milliseconds())}
	var err error
	for _, t := range []struct {
		tpl *Template
		dst **Bound
	}{{c.Keys, &b.keys}, {c.Args, &b.args}, {c.Release, &b.release}, {c.ReleaseKeys, &b.releaseKeys}, {c.ReleaseArgs, &b.releaseArgs}} {
		if t.tpl == nil {
			continue
		}
		if *t.dst, err = t.tpl.Bind(s); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Caller expands a bound contract per call. It is safe for concurrent use.
type Caller struct {
	c                        *Contract
	keys, args, release      *Bound
	releaseKeys, releaseArgs *Bound       // the release script's
	statics                  []lua.LValue // the run's fixed values, for --script-allowed
	windowMs                 int64        // for {window_index} in an expression
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

// ReleaseScriptCall returns the KEYS and ARGV of the release script for a call; ok is false
// without a release script.
func (b *Caller) ReleaseScriptCall(call *Call) (keys []string, args []any, ok bool) {
	if b.releaseKeys == nil {
		return nil, nil, false
	}
	v := values{call: call, windowMs: b.releaseKeys.windowMs}
	keys = b.releaseKeys.appendStrings(make([]string, 0, b.releaseKeys.Len()), &v)
	args = b.releaseArgs.appendAny(make([]any, 0, b.releaseArgs.Len()), &v)
	return keys, args, true
}

// Allowed judges one reply to call.
func (b *Caller) Allowed(reply any, call *Call) (bool, error) {
	if !b.c.Allowed.perCall {
		return b.c.Allowed.eval(reply, b.statics, nil) // the hot path: nothing per call to compute
	}
	return b.c.Allowed.eval(reply, b.statics, &values{call: call, windowMs: b.windowMs})
}

// AdmitAt is when reply lets call go (--script-admit-at); ok is false without the flag.
func (b *Caller) AdmitAt(reply any, call *Call) (at time.Time, ok bool, err error) {
	if b.c.AdmitAt == nil {
		return time.Time{}, false, nil
	}
	var v *values
	if b.c.AdmitAt.perCall {
		v = &values{call: call, windowMs: b.windowMs}
	}
	at, err = b.c.AdmitAt.eval(reply, b.statics, v)
	return at, true, err
}
