package keys

import (
	"fmt"
	"strings"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/keys/scores"
)

// Notes are what a person should know about an inspection besides its keys: an empty match
// (an answer, not an error), a bound reached, keys gone or missing, sets read as deadlines.
func (in Inspection) Notes() []string {
	var notes []string
	if in.Scanned == 0 {
		notes = append(notes, fmt.Sprintf("no key matches %s", describeArgs(in.Args)))
	}
	if in.Truncated {
		notes = append(notes, fmt.Sprintf("stopped at --max-keys %d: more keys match (raise --max-keys, 0 for no bound, or narrow the pattern)", in.MaxKeys))
	}
	if in.Vanished > 0 {
		notes = append(notes, fmt.Sprintf("%d key(s) vanished between SCAN and reading them (expired or deleted)", in.Vanished))
	}
	for _, m := range in.Missing {
		notes = append(notes, fmt.Sprintf("no such key: %s", m))
	}
	var guessed []string
	for _, k := range in.Keys {
		if k.Scores == scores.Deadline && k.ScoresGuessed {
			guessed = append(guessed, k.Key)
		}
	}
	if n := len(guessed); n > 0 {
		notes = append(notes, fmt.Sprintf("%s read as deadlines: most of %s scores lie in the future (--scores auto; --scores start reads them as start times)",
			describeKeys(guessed), human.Plural(n, "its", "their")))
	}
	return notes
}

// Notes are what a person should know about a member list: scores that are no times, or
// deadlines.
func (l MemberList) Notes() []string {
	var notes []string
	if l.Unit == "" {
		notes = append(notes, fmt.Sprintf("the scores of %s are not timestamps in any unit; give --score-unit to read them as times", l.Key))
	}
	if l.Scores == scores.Deadline {
		how := "--scores deadline"
		if l.Guessed {
			how = "most scores lie in the future (--scores auto; --scores start reads them as start times)"
		}
		notes = append(notes, fmt.Sprintf("the scores of %s are read as deadlines: %s; an age is how long ago the deadline passed, negative while it is ahead", l.Key, how))
	}
	return notes
}

// Notes are what a person should know about a purge besides its keys: an empty match (not an
// error: a scheduled purge of an idle limiter pages nobody), a dry run, sets read as deadlines.
func (r PurgeResult) Notes() []string {
	var notes []string
	if len(r.Keys) == 0 && !r.Interrupted {
		notes = append(notes, fmt.Sprintf("no key matches %s: nothing to purge", strings.Join(r.Args, " ")))
	}
	if r.DryRun {
		notes = append(notes, fmt.Sprintf("dry run: nothing was removed; a real run would remove %d %s older than %s", r.TotalRemoved,
			human.Plural(r.TotalRemoved, "member", "members"), human.Duration(r.OlderThan)))
	}
	var guessed []string
	for _, k := range r.Keys {
		if k.Scores == scores.Deadline && k.Guessed {
			guessed = append(guessed, k.Key)
		}
	}
	if len(guessed) > 0 {
		notes = append(notes, fmt.Sprintf("%s read as deadlines: most of %s scores lie in the future (--scores auto); a member went once its deadline passed %s ago",
			describeKeys(guessed), human.Plural(len(guessed), "its", "their"), human.Duration(r.OlderThan)))
	}
	return notes
}

// Notes are what a person should know about a reset besides its keys: an empty match, keys
// left alone for their unknown kind, a dry run.
func (r ResetResult) Notes() []string {
	var notes []string
	if len(r.Keys) == 0 && !r.Interrupted {
		notes = append(notes, fmt.Sprintf("no key matches %s: nothing to reset", strings.Join(r.Args, " ")))
	}
	var unknown []string
	for _, k := range r.Keys {
		if k.Skipped == SkipUnknownKind {
			unknown = append(unknown, k.Key)
		}
	}
	if len(unknown) > 0 {
		notes = append(notes, fmt.Sprintf("%s left alone: kind unknown (inspect shows what %s); --force deletes %s",
			describeKeys(unknown), human.Plural(len(unknown), "it holds", "they hold"), human.Plural(len(unknown), "it", "them")))
	}
	if r.DryRun {
		notes = append(notes, fmt.Sprintf("dry run: nothing was deleted; a real run would delete %d %s", r.TotalDeleted, human.Plural(r.TotalDeleted, "key", "keys")))
	}
	return notes
}

// describeKeys names a few keys: "rl:a", "rl:a and rl:b", "rl:a, rl:b and 3 more".
func describeKeys(ks []string) string {
	switch {
	case len(ks) == 1:
		return ks[0]
	case len(ks) == 2:
		return ks[0] + " and " + ks[1]
	}
	return fmt.Sprintf("%s, %s and %d more", ks[0], ks[1], len(ks)-2)
}

func describeArgs(args []string) string {
	if len(args) == 0 {
		return "* (the whole keyspace is empty)"
	}
	return strings.Join(args, " ")
}
