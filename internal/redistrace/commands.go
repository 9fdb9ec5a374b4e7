package redistrace

import (
	"strconv"
	"strings"
)

// Role is what a command does to the state a limiter decides on.
type Role uint8

// The roles. A read and a write are what a decision is made of; a key's lifetime, a prune of
// old entries and the transaction's own commands are not.
const (
	RoleOther  Role = iota // anything else (TYPE, OBJECT, DUMP, ...)
	RoleRead               // reads the count or the state: GET, ZCARD, HGET, EXISTS, ...
	RoleWrite              // changes the count or takes room: INCR, SET, ZADD, HSET, ...
	RoleLife               // reads or sets the key's lifetime: EXPIRE, PEXPIRE, TTL, PTTL, ...
	RolePrune              // removes entries or the key: ZREMRANGEBYSCORE, ZREM, DEL, ...
	RoleScript             // runs a script or function: EVAL, EVALSHA, FCALL
	RoleTx                 // the transaction's own: WATCH, MULTI, EXEC, DISCARD, UNWATCH
)

// keyRule says where a command's keys are among its arguments.
type keyRule uint8

const (
	firstKey   keyRule = iota // the first argument
	allKeys                   // every argument
	pairKeys                  // the first of each pair (MSET k v k v)
	scriptKeys                // numkeys, then the keys (EVAL script numkeys key...)
	noKeys                    // none (MULTI, EXEC)
	heldKeys                  // not known here: the arguments that hold one of the run's identities
)

type commandSpec struct {
	role Role
	keys keyRule
}

// commands are the commands a limiter sends, by role and where their keys are; any other is
// RoleOther and its keys the arguments that hold an identity.
var commands = map[string]commandSpec{}

func init() {
	for role, names := range map[Role]string{
		RoleRead: "GET GETEX STRLEN GETRANGE GETBIT BITCOUNT ZCARD ZCOUNT ZSCORE ZMSCORE ZRANK ZREVRANK ZRANGE ZRANGEBYSCORE " +
			"ZREVRANGE ZREVRANGEBYSCORE ZRANGEBYLEX ZLEXCOUNT HGET HMGET HGETALL HLEN HEXISTS HKEYS HVALS LLEN LRANGE LINDEX " +
			"SCARD SISMEMBER SMEMBERS XLEN XRANGE PFCOUNT",
		RoleWrite: "INCR INCRBY INCRBYFLOAT DECR DECRBY SET SETNX SETEX PSETEX GETSET APPEND SETRANGE SETBIT ZADD ZINCRBY " +
			"HSET HSETNX HMSET HINCRBY HINCRBYFLOAT LPUSH RPUSH LPUSHX RPUSHX LSET LINSERT SADD PFADD XADD",
		RoleLife:  "EXPIRE PEXPIRE EXPIREAT PEXPIREAT PERSIST TTL PTTL EXPIRETIME PEXPIRETIME",
		RolePrune: "ZREM ZREMRANGEBYSCORE ZREMRANGEBYRANK ZREMRANGEBYLEX ZPOPMIN ZPOPMAX HDEL SREM SPOP LPOP RPOP LTRIM LREM GETDEL XTRIM XDEL",
	} {
		for _, name := range strings.Fields(names) {
			commands[name] = commandSpec{role, firstKey}
		}
	}
	for _, name := range strings.Fields("MGET EXISTS TOUCH") {
		commands[name] = commandSpec{RoleRead, allKeys}
	}
	for _, name := range strings.Fields("DEL UNLINK") {
		commands[name] = commandSpec{RolePrune, allKeys}
	}
	commands["MSET"] = commandSpec{RoleWrite, pairKeys}
	commands["MSETNX"] = commandSpec{RoleWrite, pairKeys}
	for _, name := range strings.Fields("EVAL EVALSHA EVAL_RO EVALSHA_RO FCALL FCALL_RO") {
		commands[name] = commandSpec{RoleScript, scriptKeys}
	}
	commands["WATCH"] = commandSpec{RoleTx, allKeys}
	for _, name := range strings.Fields("MULTI EXEC DISCARD UNWATCH RESET") {
		commands[name] = commandSpec{RoleTx, noKeys}
	}
}

// RoleOf is a command's role by its name (upper case).
func RoleOf(name string) Role { return commands[name].role }

// keysOf are the keys among a command's arguments (args[0] its name, upper case); held says
// whether an argument holds one of the run's identities, for commands whose keys are not known.
func keysOf(args []string, held func(string) bool) []string {
	spec, known := commands[args[0]]
	rule := spec.keys
	if !known {
		rule = heldKeys
	}
	rest := args[1:]
	switch rule {
	case firstKey:
		if len(rest) > 0 {
			return rest[:1]
		}
	case allKeys:
		return rest
	case pairKeys:
		var keys []string
		for i := 0; i < len(rest); i += 2 {
			keys = append(keys, rest[i])
		}
		return keys
	case scriptKeys:
		if len(rest) < 2 {
			return nil
		}
		n, err := strconv.Atoi(rest[1])
		if err != nil || n < 0 || n > len(rest)-2 {
			return nil
		}
		return rest[2 : 2+n]
	case heldKeys:
		var keys []string
		for _, a := range rest {
			if held(a) {
				keys = append(keys, a)
			}
		}
		return keys
	}
	return nil
}
