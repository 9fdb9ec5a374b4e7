package redistrace

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Command is one command the application sent that touched the run's identities, as Redis ran it.
type Command struct {
	Name string   // upper case: GET, INCR, EVALSHA
	Args []string // after the name, as sent (the replay runs them again)
	Keys []string
	// Client is the application's connection as Redis saw it (host:port), Node the node it ran
	// on (a cluster's master, by index).
	Client string
	Node   int
	// AtUs is when it ran: MONITOR's time, or when the proxy forwarded it (a MULTI's commands:
	// the EXEC's), in µs since the tracer's base on this process's clock; RepliedUs when the
	// proxy read its reply (0 under MONITOR).
	AtUs, RepliedUs int64
	Reply           Reply
	// In is "script" for a command a script ran (MONITOR's lua lines) and "multi" inside a
	// MULTI/EXEC; "" alone. Step numbers the script call or the transaction it belongs to (a
	// script call's own), 0 when alone.
	In   string
	Step int64
	// Guarded: its client had WATCHed one of its keys since its last EXEC, DISCARD or UNWATCH.
	Guarded bool
	// Target and Identity are the HTTP target and which of its identities its keys hold.
	Target, Identity int
}

// Reply is a command's reply where it is known: From says how ("proxy": as the proxy read it;
// "replay": replaying the commands in Redis's order gives it), empty when not known. Value is
// an int64, a string, nil (a nil reply), []any, or a ReplyError.
type Reply struct {
	From  string
	Value any
}

// ReplyError is an error reply, its text as Redis sent it.
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// The ways a reply comes to be known.
const (
	FromProxy  = "proxy"
	FromReplay = "replay"
)

// JSON is the reply as the trace publishes it: a number, a string, an array, null, or
// {"error": message}; null when not known (then From is empty).
func (r Reply) JSON() json.RawMessage {
	b, err := json.Marshal(jsonValue(r.Value))
	if err != nil || r.From == "" {
		return json.RawMessage("null")
	}
	return b
}

func jsonValue(v any) any {
	switch x := v.(type) {
	case ReplyError:
		return map[string]string{"error": string(x)}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case float64, int64, string, nil, bool:
		return x
	}
	return fmt.Sprint(v)
}

// ReplyOf is a reply read back from its JSON (Reply.JSON's) and how it was known: numbers are
// integers, {"error": m} an error; nil JSON, or no from, is a reply not known.
func ReplyOf(raw json.RawMessage, from string) Reply {
	if from == "" || raw == nil {
		return Reply{}
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return Reply{}
	}
	return Reply{From: from, Value: fromJSON(v)}
}

func fromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		return x.String()
	case []any:
		for i := range x {
			x[i] = fromJSON(x[i])
		}
		return x
	case map[string]any:
		if msg, ok := x["error"].(string); ok && len(x) == 1 {
			return ReplyError(msg)
		}
	}
	return v
}

// observed is one command as a source saw it: MONITOR's line, or the proxy's command and reply.
type observed struct {
	client     string
	atUs       int64 // µs since the tracer's base
	repliedUs  int64
	args       []string // args[0] the command's name, upper case
	reply      Reply
	byScript   bool // MONITOR's [db lua] line: run by the script called last
	execFailed bool // the proxy saw EXEC answered nil (a WATCH aborted it) or an error
	execReply  []any
}

// connState is one client connection's transaction: its MULTI's commands not yet run, and the
// keys it WATCHes.
type connState struct {
	multi   bool
	queued  []Command
	watched map[string]bool
}

// streamer turns one node's (or one proxied connection's) commands into Commands, in the order
// they ran: a MULTI's at its EXEC, a script's own commands after its call.
type streamer struct {
	t     *Tracer
	node  int
	conns map[string]*connState
	// script is the last script call's client and step, and the connection whose MULTI queued
	// it (nil when it ran at once): the lua lines that follow are its.
	scriptClient string
	scriptStep   int64
	scriptQueue  *connState
}

func newStreamer(t *Tracer, node int) *streamer {
	return &streamer{t: t, node: node, conns: map[string]*connState{}}
}

func (s *streamer) conn(client string) *connState {
	c := s.conns[client]
	if c == nil {
		c = &connState{}
		s.conns[client] = c
	}
	return c
}

// observe takes in one command.
func (s *streamer) observe(o observed) {
	name := o.args[0]
	if o.byScript {
		c, ok := s.command(o)
		if !ok {
			return
		}
		c.Client, c.In, c.Step = s.scriptClient, "script", s.scriptStep
		if s.scriptQueue != nil {
			s.scriptQueue.queued = append(s.scriptQueue.queued, c)
			return
		}
		s.t.emit([]Command{c})
		return
	}
	cs := s.conn(o.client)
	switch name {
	case "MULTI":
		cs.multi, cs.queued = true, nil
		return
	case "EXEC":
		if cs.multi && !o.execFailed {
			s.exec(cs, o)
		}
		cs.multi, cs.queued, cs.watched = false, nil, nil
		return
	case "DISCARD":
		cs.multi, cs.queued, cs.watched = false, nil, nil
		return
	case "UNWATCH", "RESET":
		cs.watched = nil
		return
	}
	c, ok := s.command(o)
	if RoleOf(name) == RoleScript {
		s.scriptClient, s.scriptStep, s.scriptQueue = o.client, s.t.newStep(), nil
		if cs.multi {
			s.scriptQueue = cs
		}
		c.Step = s.scriptStep
	}
	if name == "WATCH" {
		if cs.watched == nil {
			cs.watched = map[string]bool{}
		}
		for _, k := range c.Keys {
			cs.watched[k] = true
		}
	}
	if !ok {
		return
	}
	if cs.multi {
		cs.queued = append(cs.queued, c)
		return
	}
	c.Guarded = guarded(cs, c.Keys)
	s.t.emit([]Command{c})
}

// exec emits a MULTI's commands as one step, run at the EXEC, each with its reply from the
// EXEC's where the proxy read it.
func (s *streamer) exec(cs *connState, o observed) {
	if len(cs.queued) == 0 {
		return
	}
	step := s.t.newStep()
	block := make([]Command, 0, len(cs.queued))
	for i, c := range cs.queued {
		c.AtUs, c.RepliedUs = o.atUs, o.repliedUs
		c.Guarded = guarded(cs, c.Keys)
		if c.In == "" {
			c.In, c.Step = "multi", step
			if i < len(o.execReply) {
				c.Reply = Reply{From: FromProxy, Value: o.execReply[i]}
			}
		}
		block = append(block, c)
	}
	s.t.emit(block)
}

// command makes a Command of o when a key it touches holds one of the run's identities.
func (s *streamer) command(o observed) (Command, bool) {
	ids := s.t.ids
	keys := keysOf(o.args, ids.Holds)
	for _, k := range keys {
		if !ids.Holds(k) {
			continue
		}
		target, identity, _ := ids.Of(k)
		return Command{Name: o.args[0], Args: o.args[1:], Keys: keys, Client: o.client, Node: s.node,
			AtUs: o.atUs, RepliedUs: o.repliedUs, Reply: o.reply, Target: target, Identity: identity}, true
	}
	return Command{}, false
}

// guarded reports whether the connection WATCHes one of keys.
func guarded(cs *connState, keys []string) bool {
	for _, k := range keys {
		if cs.watched[k] {
			return true
		}
	}
	return false
}

// upper is a command's name as the tables hold it.
func upper(name string) string { return strings.ToUpper(name) }
