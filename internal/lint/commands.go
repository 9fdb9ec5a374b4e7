package lint

// keySpec says where a command's keys are, the way Redis' COMMAND INFO does:
// argument positions first..last (last < 0: up to the final argument) every
// step arguments. Position 0 is the command name itself.
type keySpec struct{ first, last, step int }

var (
	firstKey   = keySpec{1, 1, 1}
	allKeys    = keySpec{1, -1, 1}
	pairedKeys = keySpec{1, -1, 2} // MSET key value key value ...
	twoKeys    = keySpec{1, 2, 1}  // RENAME source destination
)

// positions lists the key positions among n arguments (command included).
func (s keySpec) positions(n int) []int {
	last := s.last
	if last < 0 || last >= n {
		last = n - 1
	}
	var out []int
	for i := s.first; i <= last; i += s.step {
		out = append(out, i)
	}
	return out
}

// keyCommands are the commands whose key positions the linter knows. A
// command missing here is not checked: guessing its keys would be worse.
var keyCommands = map[string]keySpec{
	"GET": firstKey, "SET": firstKey, "SETEX": firstKey, "PSETEX": firstKey,
	"SETNX": firstKey, "GETSET": firstKey, "GETDEL": firstKey, "GETEX": firstKey,
	"INCR": firstKey, "INCRBY": firstKey, "INCRBYFLOAT": firstKey,
	"DECR": firstKey, "DECRBY": firstKey, "APPEND": firstKey, "STRLEN": firstKey,
	"EXPIRE": firstKey, "PEXPIRE": firstKey, "EXPIREAT": firstKey, "PEXPIREAT": firstKey,
	"PERSIST": firstKey, "TTL": firstKey, "PTTL": firstKey, "TYPE": firstKey,
	"DEL": allKeys, "UNLINK": allKeys, "EXISTS": allKeys, "MGET": allKeys,
	"MSET": pairedKeys, "MSETNX": pairedKeys, "RENAME": twoKeys,
	"ZADD": firstKey, "ZREM": firstKey, "ZCARD": firstKey, "ZCOUNT": firstKey,
	"ZSCORE": firstKey, "ZINCRBY": firstKey, "ZRANGE": firstKey,
	"ZRANGEBYSCORE": firstKey, "ZREVRANGE": firstKey, "ZREVRANGEBYSCORE": firstKey,
	"ZRANK": firstKey, "ZREVRANK": firstKey, "ZREMRANGEBYSCORE": firstKey,
	"ZREMRANGEBYRANK": firstKey, "ZREMRANGEBYLEX": firstKey,
	"ZPOPMIN": firstKey, "ZPOPMAX": firstKey,
	"HGET": firstKey, "HSET": firstKey, "HSETNX": firstKey, "HMGET": firstKey,
	"HMSET": firstKey, "HDEL": firstKey, "HINCRBY": firstKey, "HINCRBYFLOAT": firstKey,
	"HGETALL": firstKey, "HEXISTS": firstKey, "HLEN": firstKey, "HKEYS": firstKey,
	"HVALS": firstKey,
	"SADD":  firstKey, "SREM": firstKey, "SCARD": firstKey, "SISMEMBER": firstKey,
	"SMEMBERS": firstKey, "SPOP": firstKey, "SRANDMEMBER": firstKey,
	"LPUSH": firstKey, "RPUSH": firstKey, "LPOP": firstKey, "RPOP": firstKey,
	"LLEN": firstKey, "LRANGE": firstKey, "LTRIM": firstKey,
	"XADD": firstKey,
}

// writeCommands create or grow the key at their key positions, so that key
// needs a TTL somewhere in the script. SET is here too; setTTLOptions decides
// whether a given SET already carries one.
var writeCommands = map[string]bool{
	"SET": true, "SETNX": true, "GETSET": true, "MSET": true, "MSETNX": true,
	"INCR": true, "INCRBY": true, "INCRBYFLOAT": true, "DECR": true, "DECRBY": true,
	"APPEND": true, "ZADD": true, "ZINCRBY": true,
	"HSET": true, "HSETNX": true, "HMSET": true, "HINCRBY": true, "HINCRBYFLOAT": true,
	"SADD": true, "LPUSH": true, "RPUSH": true, "XADD": true,
}

// expireCommands give the key at position 1 a TTL.
var expireCommands = map[string]bool{
	"EXPIRE": true, "PEXPIRE": true, "EXPIREAT": true, "PEXPIREAT": true,
	"SETEX": true, "PSETEX": true,
}

// setTTLOptions are the SET options that set a TTL (KEEPTTL keeps the one the
// key already has, which is just as bounded).
var setTTLOptions = map[string]bool{
	"EX": true, "PX": true, "EXAT": true, "PXAT": true, "KEEPTTL": true,
}

// nondeterministicCommands read the clock or a random source on the server.
// The value says what the caller should pass in ARGV instead.
var nondeterministicCommands = map[string]string{
	"TIME":        "time",
	"RANDOMKEY":   "randomness",
	"SRANDMEMBER": "randomness",
	"SPOP":        "randomness",
}

// wholeReplyCommands return everything a key holds, so their reply grows with
// the data however the script calls them.
var wholeReplyCommands = map[string]bool{
	"SMEMBERS": true, "HGETALL": true, "HKEYS": true, "HVALS": true, "KEYS": true,
}

// indexRangeCommands take start and stop indexes at positions 2 and 3.
var indexRangeCommands = map[string]bool{
	"ZRANGE": true, "ZREVRANGE": true, "LRANGE": true,
}

// scoreRangeCommands return every member in a score or lex range unless LIMIT
// caps them.
var scoreRangeCommands = map[string]bool{
	"ZRANGEBYSCORE": true, "ZREVRANGEBYSCORE": true,
	"ZRANGEBYLEX": true, "ZREVRANGEBYLEX": true,
}

// countCommands return a size that grows with the data; a numeric for up to
// one is as unbounded as a loop over the members themselves.
var countCommands = map[string]bool{
	"ZCARD": true, "ZCOUNT": true, "SCARD": true, "LLEN": true, "HLEN": true,
}
