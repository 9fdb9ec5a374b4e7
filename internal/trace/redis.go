package trace

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// RedisCommands are the commands an application sent to its Redis on the keys of a first
// overshoot, during its span (hammer --http-redis-trace): what the endpoint did inside, in the
// order Redis ran them, and the race among them when one shows.
type RedisCommands struct {
	// Keys are the keys the commands touched, FromMs and ToMs the span they were taken over
	// (from the run's start, widened by what the clocks' agreement allows).
	Keys     []string       `json:"keys"`
	FromMs   float64        `json:"from_ms"`
	ToMs     float64        `json:"to_ms"`
	Commands []RedisCommand `json:"commands"`
	// Omitted counts the span's commands not listed (at most MaxRedisCommands are, around the
	// race when there is one).
	Omitted int64 `json:"omitted"`
	// Race, when the commands show one, names two reads of one key before a write to it, by
	// their places in Commands.
	Race *RedisRace `json:"race,omitempty"`
}

// MaxRedisCommands bounds the commands a first overshoot lists.
const MaxRedisCommands = 64

// RedisCommand is one command as Redis ran it: its name, the keys it touched, the application's
// connection that sent it (host:port as Redis saw it), when it ran in µs from the run's start
// (MONITOR's time, or when the proxy forwarded it), and its reply where it is known: what the
// proxy saw, or what replaying the commands in Redis's order gives (ReplyFrom says which; null
// and no ReplyFrom when it is not known). In says it ran inside a script or a MULTI/EXEC.
type RedisCommand struct {
	Cmd       string          `json:"cmd"`
	Keys      []string        `json:"keys"`
	Client    string          `json:"client"`
	AtUs      int64           `json:"at_us"`
	Reply     json.RawMessage `json:"reply"`
	ReplyFrom string          `json:"reply_from,omitempty"`
	In        string          `json:"in,omitempty"`
}

// RedisRace is the race as Redis ran it: Reads are two reads of Key with no write to it between
// the first and Writes[0], the first write after both; Writes[1], when there is one, the next.
type RedisRace struct {
	Key    string `json:"key"`
	Reads  [2]int `json:"reads"`
	Writes []int  `json:"writes"`
}

// HowTokens are the pieces of the how-line that tells the race in commands, as the seed tells
// its own: the two reads and the writes, with their replies and times from the first, then what
// it shows ("two reads of 9 before either INCR"). Without a race, the first few commands.
func (r *RedisCommands) HowTokens() []string {
	var picked []int
	if r.Race != nil {
		picked = append(append(picked, r.Race.Reads[:]...), r.Race.Writes...)
	} else {
		for i := range min(len(r.Commands), 3) {
			picked = append(picked, i)
		}
	}
	if len(picked) == 0 {
		return []string{fmt.Sprintf("→ no command on %s during the span", strings.Join(r.Keys, ", "))}
	}
	first := r.Commands[picked[0]].AtUs
	var tokens []string
	keys := map[string]bool{}
	for _, i := range picked {
		c := r.Commands[i]
		t := c.Cmd
		if c.ReplyFrom != "" {
			t += " → " + ReplyText(c.Reply)
		}
		tokens = append(tokens, fmt.Sprintf("%s (%s +%.2fms)", t, port(c.Client), float64(c.AtUs-first)/1000))
		for _, k := range c.Keys {
			keys[k] = true
		}
	}
	on := make([]string, 0, len(keys))
	for k := range keys {
		on = append(on, k)
	}
	sort.Strings(on)
	if r.Race == nil {
		return append(tokens, fmt.Sprintf("→ no two reads of one key before a write to it (%s in the span, on %s)",
			strconv.Itoa(len(r.Commands)+int(r.Omitted)), strings.Join(on, ", ")))
	}
	return append(tokens, "→ "+r.Race.Story(r.Commands)+" of "+r.Race.Key)
}

// Story says what the race shows: "two reads of 9 before either INCR", or of the count when the
// replies are not known.
func (race *RedisRace) Story(cmds []RedisCommand) string {
	a, b := cmds[race.Reads[0]], cmds[race.Reads[1]]
	what := "the same key"
	if a.ReplyFrom != "" && b.ReplyFrom != "" {
		if ra, rb := ReplyText(a.Reply), ReplyText(b.Reply); ra == rb {
			what = ra
		} else {
			what = ra + " and " + rb
		}
	}
	write := cmds[race.Writes[0]].Cmd
	switch {
	case len(race.Writes) > 1 && cmds[race.Writes[1]].Cmd == write:
		return fmt.Sprintf("two reads of %s before either %s", what, write)
	case len(race.Writes) > 1:
		return fmt.Sprintf("two reads of %s before either write (%s, %s)", what, write, cmds[race.Writes[1]].Cmd)
	}
	return fmt.Sprintf("two reads of %s before the %s", what, write)
}

// port is a client's address as a how-line shows it: its port (":55586"), or all of it when it
// has none.
func port(client string) string {
	if i := strings.LastIndexByte(client, ':'); i > 0 && !strings.HasPrefix(client, "unix") {
		return client[i:]
	}
	return client
}
