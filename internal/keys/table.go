package keys

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/keys/kind"
	"github.com/limitctl/limitctl/internal/keys/scores"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// The tables of inspect and purge: columns over the same values their JSON holds (json.go).
// tsv keeps the JSON's units (milliseconds, bytes); a terminal reads them as durations and sizes.

// Table is the inspection's keys. The key, its size and flags always show, whole. On a narrow
// terminal the type goes first, then the node, the newest age, memory and the TTL (NO_TTL stays
// among the flags); then the details are cut; then the details, the oldest age and the kind go. The stale count and the details show only
// when some key has any.
func (in Inspection) Table() tableprint.Tabular {
	type k = KeyInfo
	tot := in.Totals()
	memory := human.Bytes(tot.Memory)
	if tot.MemoryUnknown > 0 {
		memory = "≥" + memory // some key's memory is unknown ("-")
	}
	return tableprint.Table[KeyInfo]{Rows: in.Keys, Totals: true, Optional: 4, Columns: []tableprint.Column[KeyInfo]{
		{Header: "key", Human: func(x k) string { return x.Key }, Whole: true,
			Total: fmt.Sprintf("total (%d keys)", tot.Keys)},
		{Header: "node", Human: func(x k) string { return x.Node }, Whole: true, Priority: 8},
		{Header: "type", Human: func(x k) string { return x.Type }, Priority: 9},
		{Header: "kind", Human: func(x k) string { return string(x.Kind) }, Priority: 2},
		{Header: "size", Human: func(x k) string { return itoa(x.Size) }, Total: itoa(tot.Members) + " members"},
		{Header: "ttl", Field: "ttl_ms", Human: func(x k) string { return ttlCell(x.TTL) }, Machine: func(x k) string { return ttlMs(x.TTL) }, Priority: 5},
		{Header: "oldest", Field: "oldest_age_ms", Human: func(x k) string { return durationCell(x.OldestAge) }, Machine: func(x k) string { return msCell(x.OldestAge) }, Priority: 3},
		{Header: "newest", Field: "newest_age_ms", Human: func(x k) string { return durationCell(x.NewestAge) }, Machine: func(x k) string { return msCell(x.NewestAge) }, Priority: 7},
		{Header: "stale", Human: func(x k) string { return itoa(x.Stale) }, HideZero: true, Priority: 1, Total: itoa(tot.Stale) + " stale"},
		{Header: "memory", Field: "memory_bytes", Human: func(x k) string { return bytesCell(x.Memory) }, Machine: func(x k) string { return numberCell(x.Memory) }, Priority: 6, Total: memory},
		{Header: "flags", Human: flagsCell, Whole: true},
		{Header: "detail", Human: detailCell, HideZero: true, MinWidth: 16, Priority: 4},
	}}
}

// detailCell says what a key's kind adds: a gcra key's refill, a sliding counter's estimate, a
// deadline set's expired members.
func detailCell(k KeyInfo) string {
	var parts []string
	with := func() {
		if k.PairKey != "" {
			parts = append(parts, "with "+k.PairKey)
		}
	}
	switch k.Kind {
	case kind.GCRA:
		switch {
		case k.FullIn == nil:
			parts = append(parts, "epoch unknown")
		case *k.FullIn == 0:
			parts = append(parts, "full")
		default:
			parts = append(parts, "full in "+human.Duration(k.FullIn.Truncate(time.Millisecond)))
		}
	case kind.SlidingCounter:
		if k.Estimate != nil {
			parts = append(parts, fmt.Sprintf("estimate %d", *k.Estimate))
		} else if k.Window > 0 {
			parts = append(parts, "older window")
		}
		if k.Window > 0 {
			parts = append(parts, human.Duration(k.Window.Truncate(time.Millisecond))+" window")
		}
		with()
	case kind.Counter:
		if k.Window > 0 {
			parts = append(parts, human.Duration(k.Window.Truncate(time.Millisecond))+" window")
		}
		switch { // a window kept with its end
		case k.FullIn == nil:
		case *k.FullIn == 0:
			parts = append(parts, "over")
		default:
			parts = append(parts, "ends in "+human.Duration(k.FullIn.Truncate(time.Millisecond)))
		}
		with()
	case kind.Bucket:
		with() // a bucket kept in two strings
	}
	if k.Scores == scores.Deadline {
		parts = append(parts, "deadlines")
		if k.ScoresGuessed {
			parts[len(parts)-1] += " (guessed)"
		}
		if k.Expired != nil {
			parts = append(parts, fmt.Sprintf("%d expired", *k.Expired))
		}
	}
	return strings.Join(parts, ", ")
}

func flagsCell(k KeyInfo) string {
	flags := make([]string, len(k.Flags))
	for i, f := range k.Flags {
		flags[i] = string(f)
	}
	return strings.Join(flags, ",")
}

// Table is the listed members. The member and its age always show (the member whole); on a
// narrow terminal the score goes first, then the time, then whether it is stale.
func (l MemberList) Table() tableprint.Tabular {
	type m = Member
	stale := 0
	for _, x := range l.Members {
		if x.Stale {
			stale++
		}
	}
	at := func(x m, none string) string {
		if x.Time == nil {
			return none
		}
		return x.Time.UTC().Format(memberTime)
	}
	return tableprint.Table[Member]{Rows: l.Members, Totals: true, Columns: []tableprint.Column[Member]{
		{Header: "member", Human: func(x m) string { return x.Member }, Whole: true,
			Total: fmt.Sprintf("%d of %d members", len(l.Members), l.Size)},
		{Header: "score", Human: func(x m) string { return strconv.FormatFloat(x.Score, 'f', -1, 64) }, Priority: 3},
		{Header: "time", Human: func(x m) string { return at(x, "-") }, Machine: func(x m) string { return at(x, "") }, Priority: 2},
		{Header: "age", Field: "age_ms", Human: func(x m) string { return durationCell(x.Age) }, Machine: func(x m) string { return msCell(x.Age) }},
		staleColumn(l.Stale > 0, stale),
	}}
}

// staleColumn says whether each member is stale; without --stale no member is judged (how old
// is stale is the operator's to say, so no member is called fresh): the table shows -, while tsv
// and JSON keep the field as it is (false).
func staleColumn(judged bool, stale int) tableprint.Column[Member] {
	if !judged {
		return tableprint.Column[Member]{Header: "stale", Human: func(Member) string { return "-" },
			Machine: func(x Member) string { return human.YesNo(x.Stale) }, Priority: 1}
	}
	return tableprint.Column[Member]{Header: "stale", Human: func(x Member) string { return human.YesNo(x.Stale) }, Priority: 1,
		Total: fmt.Sprintf("%d stale", stale)}
}

// Table is the purged keys: the key (whole), what was removed and what remains always show. On a
// narrow terminal the node goes first, then the unit; then why a key was skipped is cut; then
// whether scores were read as deadlines goes. The skipped column shows
// only when a key was skipped, the scores column only when a set was read as deadlines (tsv:
// always).
func (r PurgeResult) Table() tableprint.Tabular {
	type k = PurgedKey
	var remaining int64
	skipped := 0
	for _, key := range r.Keys {
		remaining += key.Remaining
		if key.Skipped != "" {
			skipped++
		}
	}
	removed := tableprint.Column[k]{Header: "removed", Human: func(x k) string { return itoa(x.Removed) }, Total: itoa(r.TotalRemoved)}
	if r.DryRun {
		removed.Header, removed.Field = "would remove", "removed"
	}
	return tableprint.Table[PurgedKey]{Rows: r.Keys, Totals: true, Optional: 2, Columns: []tableprint.Column[k]{
		{Header: "key", Human: func(x k) string { return x.Key }, Whole: true,
			Total: fmt.Sprintf("total (%d keys)", len(r.Keys))},
		{Header: "node", Human: func(x k) string { return x.Node }, Whole: true, Priority: 4},
		{Header: "unit", Human: func(x k) string { return string(x.Unit) }, Priority: 3},
		removed,
		{Header: "remaining", Human: func(x k) string { return itoa(x.Remaining) }, Total: itoa(remaining)},
		{Header: "skipped", Human: func(x k) string { return x.Skipped }, MinWidth: 16, Priority: 1,
			HideZero: true, Total: fmt.Sprintf("%d skipped", skipped)},
		{Header: "scores", Priority: 2, HideZero: true, // on a terminal only deadlines are news
			Human: func(x k) string {
				if x.Scores != scores.Deadline {
					return ""
				}
				return scoresCell(x.Scores, x.Guessed)
			},
			Machine: func(x k) string { return scoresCell(x.Scores, x.Guessed) }},
	}}
}

// Table is the reset keys: the key, whether it went and what went with it always show; on a
// narrow terminal the node goes first, then the kind; then the keys (in the middle) and the
// partners are cut. The skipped column shows only when a key was skipped (tsv: always).
func (r ResetResult) Table() tableprint.Tabular {
	type k = ResetKey
	skipped := 0
	for _, key := range r.Keys {
		if key.Skipped != "" {
			skipped++
		}
	}
	deleted := tableprint.Column[k]{Header: "deleted", Total: itoa(r.TotalDeleted) + " keys",
		Human:   func(x k) string { return human.YesNo(x.Deleted) },
		Machine: func(x k) string { return strconv.FormatBool(x.Deleted) }}
	if r.DryRun {
		deleted.Header, deleted.Field = "would delete", "deleted"
	}
	return tableprint.Table[ResetKey]{Rows: r.Keys, Totals: true, Optional: 2, Columns: []tableprint.Column[k]{
		{Header: "key", Human: func(x k) string { return x.Key }, MinWidth: 20, Cut: tableprint.CutMiddle,
			Total: fmt.Sprintf("total (%d keys)", len(r.Keys))},
		{Header: "node", Human: func(x k) string { return x.Node }, MinWidth: 12, Cut: tableprint.CutMiddle, Priority: 4},
		{Header: "kind", Human: func(x k) string { return string(x.Kind) }, Priority: 3},
		deleted,
		{Header: "with", Human: func(x k) string { return strings.Join(x.With, ", ") }, MinWidth: 16, Cut: tableprint.CutMiddle,
			Machine: func(x k) string { return strings.Join(x.With, " ") }},
		{Header: "skipped", Human: func(x k) string { return x.Skipped }, MinWidth: 16, Priority: 1,
			HideZero: true, Total: fmt.Sprintf("%d skipped", skipped)},
	}}
}

// scoresCell says how a set's scores were read: start, deadline, "deadline (guessed)".
func scoresCell(mode scores.Mode, guessed bool) string {
	if mode == scores.Deadline && guessed {
		return "deadline (guessed)"
	}
	return string(mode)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// ttlCell reads a TTL, negative for none.
func ttlCell(d time.Duration) string {
	if d < 0 {
		return "none"
	}
	return human.Duration(d.Truncate(time.Millisecond))
}

func ttlMs(d time.Duration) string {
	if d < 0 {
		return "-1"
	}
	return itoa(d.Milliseconds())
}

// durationCell reads an age; "-" when there is none.
func durationCell(d *time.Duration) string {
	if d == nil {
		return "-"
	}
	return human.Duration(d.Truncate(time.Millisecond))
}

// msCell is an age in milliseconds for a script, empty when there is none.
func msCell(d *time.Duration) string { return numberCell(msPtr(d)) }

func numberCell(n *int64) string {
	if n == nil {
		return ""
	}
	return itoa(*n)
}

func bytesCell(n *int64) string {
	if n == nil {
		return "-"
	}
	return human.Bytes(*n)
}
