package contract

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The set-up flags, named in errors.
const (
	FlagSetup     = "--script-setup"
	FlagSetupFile = "--script-setup-file"
)

// SetupLine is one --script-setup or --script-setup-file value as given; a run's lines keep the
// order they were given in across both flags, the order they run in.
type SetupLine struct{ Flag, Text string }

// SetupFlag is the value of --script-setup or --script-setup-file (a pflag.Value): each value
// is appended to one list, so the set-up steps run in the order they were given across both.
type SetupFlag struct {
	Flag  string // FlagSetup or FlagSetupFile
	Lines *[]SetupLine
}

func (v SetupFlag) String() string { return "" }

// Type is what --help calls the value.
func (v SetupFlag) Type() string {
	if v.Flag == FlagSetupFile {
		return "line"
	}
	return "command"
}

// Set appends text as a line of the flag.
func (v SetupFlag) Set(text string) error {
	*v.Lines = append(*v.Lines, SetupLine{Flag: v.Flag, Text: text})
	return nil
}

// String is the line as its flag and value: --script-setup 'SET {key} {limit} NX'.
func (l SetupLine) String() string { return fmt.Sprintf("%s '%s'", l.Flag, l.Text) }

// MarshalJSON writes the line as String does, as the JSON's contract lists the set-up steps.
func (l SetupLine) MarshalJSON() ([]byte, error) { return json.Marshal(l.String()) }

// UnmarshalJSON reads what MarshalJSON wrote (a shared run's published rules).
func (l *SetupLine) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	flag, text, _ := strings.Cut(s, " ")
	*l = SetupLine{Flag: flag, Text: strings.TrimSuffix(strings.TrimPrefix(text, "'"), "'")}
	return nil
}

// Setup is one compiled set-up step, run on every key of the run before its load: a command
// template (--script-setup 'SET {key} {limit} NX'), or a script with KEYS and ARGV templates in
// redis-cli --eval's syntax (--script-setup-file 'init.lua {key} , {limit}').
type Setup struct {
	Line    SetupLine
	Command *Template // --script-setup; nil for a script
	// File is the script's path (--script-setup-file); Source its text, which the caller reads.
	File, Source string
	Keys, Args   *Template
}

// ParseSetup checks and compiles one set-up line. Every key it names must be the run's own:
// a command must use {key} (the hammer never writes a key it did not create), and each of a
// script's KEYS must contain it. {member} and {reply} belong to a request, and a set-up runs
// before any.
func ParseSetup(line SetupLine) (*Setup, error) {
	t, err := Parse(line.Flag, line.Text)
	if err != nil {
		return nil, err
	}
	for _, p := range []placeholder{phMember, phReply} {
		if t.usesPlaceholder(p) {
			return nil, &Error{Flag: line.Flag, Msg: fmt.Sprintf("{%s} belongs to a request; a set-up runs once per key before any request", p.name())}
		}
	}
	s := &Setup{Line: line}
	if line.Flag == FlagSetup {
		if t.Len() == 0 {
			return nil, &Error{Flag: line.Flag, Msg: "empty: give a command such as 'SET {key} {limit} NX'"}
		}
		if name, ok := t.literalWord(0); !ok || name == "" {
			return nil, &Error{Flag: line.Flag, Column: 1, Msg: "the first word must be a command name"}
		}
		if !t.usesPlaceholder(phKey) {
			return nil, &Error{Flag: line.Flag, Msg: "names no key of the run: write under {key} (e.g. 'SET {key} {limit} NX'), so the clean-up deletes what it wrote"}
		}
		s.Command = t
		return s, nil
	}
	if t.Len() == 0 {
		return nil, &Error{Flag: line.Flag, Msg: "empty: give 'FILE.lua KEY ... , ARG ...' (redis-cli --eval's syntax)"}
	}
	file, ok := t.literalWord(0)
	if !ok || file == "" {
		return nil, &Error{Flag: line.Flag, Column: 1, Msg: "the first word must be the script's file name"}
	}
	comma := -1
	for i := 1; i < t.Len(); i++ {
		if w, ok := t.literalWord(i); ok && w == "," {
			comma = i
			break
		}
	}
	if comma < 0 {
		return nil, &Error{Flag: line.Flag, Column: len([]rune(line.Text)) + 1,
			Msg: "no ',' between the KEYS and the ARGV: give 'FILE.lua KEY ... , ARG ...' (redis-cli --eval's syntax; a lone ',' when there are no ARGV)"}
	}
	s.File = file
	s.Keys = &Template{flag: line.Flag, text: line.Text, words: t.words[1:comma]}
	s.Args = &Template{flag: line.Flag, text: line.Text, words: t.words[comma+1:]}
	for i := range s.Keys.words {
		if text, ok := s.Keys.literalWord(i); ok && text == "" {
			continue
		}
		if !s.Keys.wordUses(i, phKey) {
			return nil, &Error{Flag: line.Flag, Msg: fmt.Sprintf("key %d must contain {key} (the run's own key, hash-tagged), e.g. '{key}:config'", i+1)}
		}
	}
	return s, nil
}

// String is the step as given, for messages: the flag and its value.
func (s *Setup) String() string { return s.Line.String() }

// BoundSetup is a set-up step with the run's fixed values folded in.
type BoundSetup struct {
	Setup               *Setup
	command, keys, args *Bound
}

// Bind folds the run's fixed values into the step.
func (s *Setup) Bind(st Static) (*BoundSetup, error) {
	b := &BoundSetup{Setup: s}
	var err error
	for _, t := range []struct {
		tpl *Template
		dst **Bound
	}{{s.Command, &b.command}, {s.Keys, &b.keys}, {s.Args, &b.args}} {
		if t.tpl == nil {
			continue
		}
		if *t.dst, err = t.tpl.Bind(st); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Command returns the command's words for key at now; nil for a script step.
func (b *BoundSetup) Command(key string, now time.Time) []any {
	if b.command == nil {
		return nil
	}
	v := values{call: &Call{Key: key, Now: now}, windowMs: b.command.windowMs}
	return b.command.appendAny(nil, &v)
}

// Script returns the script's KEYS and ARGV for key at now; ok is false for a command step.
func (b *BoundSetup) Script(key string, now time.Time) (keys []string, args []any, ok bool) {
	if b.keys == nil {
		return nil, nil, false
	}
	v := values{call: &Call{Key: key, Now: now}, windowMs: b.keys.windowMs}
	return b.keys.appendStrings(nil, &v), b.args.appendAny(nil, &v), true
}
