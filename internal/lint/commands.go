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
	"LINDEX": firstKey, "LSET": firstKey, "LREM": firstKey, "LINSERT": firstKey,
	"LPUSHX": firstKey, "RPUSHX": firstKey, "RPOPLPUSH": twoKeys, "LMOVE": twoKeys, "SMOVE": twoKeys,
	"HSTRLEN": firstKey, "ZLEXCOUNT": firstKey, "ZRANGEBYLEX": firstKey, "ZREVRANGEBYLEX": firstKey,
	"ZMSCORE": firstKey, "SMISMEMBER": firstKey,
	"SETRANGE": firstKey, "GETRANGE": firstKey, "SETBIT": firstKey, "GETBIT": firstKey, "BITCOUNT": firstKey,
	"PFADD": firstKey, "PFCOUNT": allKeys,
	"XADD": firstKey, "XLEN": firstKey, "XDEL": firstKey, "XTRIM": firstKey, "XRANGE": firstKey, "XREVRANGE": firstKey,
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
	"SETRANGE": true, "SETBIT": true, "PFADD": true,
}

// refusedInReadOnly are the commands Redis refuses in a script flagged
// no-writes: those redis-server 7.0's COMMAND marks write (the test checks
// this list against a real server), plus the may-replicate ones COMMAND does
// not show (PUBLISH, SPUBLISH, PFCOUNT), which Redis refuses there too.
var refusedInReadOnly = map[string]bool{
	"APPEND": true, "BITFIELD": true, "BITOP": true, "BLMPOP": true, "BZMPOP": true, "COPY": true,
	"DECR": true, "DECRBY": true, "DEL": true, "EXPIRE": true, "EXPIREAT": true, "FLUSHALL": true,
	"FLUSHDB": true, "GEOADD": true, "GEORADIUS": true, "GEORADIUSBYMEMBER": true, "GEOSEARCHSTORE": true,
	"GETDEL": true, "GETEX": true, "GETSET": true, "HDEL": true, "HINCRBY": true, "HINCRBYFLOAT": true,
	"HMSET": true, "HSET": true, "HSETNX": true, "INCR": true, "INCRBY": true, "INCRBYFLOAT": true,
	"LINSERT": true, "LMOVE": true, "LMPOP": true, "LPOP": true, "LPUSH": true, "LPUSHX": true,
	"LREM": true, "LSET": true, "LTRIM": true, "MIGRATE": true, "MOVE": true, "MSET": true,
	"MSETNX": true, "PERSIST": true, "PEXPIRE": true, "PEXPIREAT": true, "PFADD": true, "PFDEBUG": true,
	"PFMERGE": true, "PSETEX": true, "RENAME": true, "RENAMENX": true, "RESTORE": true,
	"RESTORE-ASKING": true, "RPOP": true, "RPOPLPUSH": true, "RPUSH": true, "RPUSHX": true, "SADD": true,
	"SDIFFSTORE": true, "SET": true, "SETBIT": true, "SETEX": true, "SETNX": true, "SETRANGE": true,
	"SINTERSTORE": true, "SMOVE": true, "SORT": true, "SPOP": true, "SREM": true, "SUNIONSTORE": true,
	"SWAPDB": true, "UNLINK": true, "XACK": true, "XADD": true, "XAUTOCLAIM": true, "XCLAIM": true,
	"XDEL": true, "XGROUP": true, "XREADGROUP": true, "XSETID": true, "XTRIM": true, "ZADD": true,
	"ZDIFFSTORE": true, "ZINCRBY": true, "ZINTERSTORE": true, "ZMPOP": true, "ZPOPMAX": true,
	"ZPOPMIN": true, "ZRANGESTORE": true, "ZREM": true, "ZREMRANGEBYLEX": true, "ZREMRANGEBYRANK": true,
	"ZREMRANGEBYSCORE": true, "ZUNIONSTORE": true,
	"PUBLISH": true, "SPUBLISH": true, "PFCOUNT": true,
}

// integerReplyCommands answer an integer, which Lua receives as a number.
var integerReplyCommands = map[string]bool{
	"INCR": true, "INCRBY": true, "DECR": true, "DECRBY": true, "APPEND": true, "STRLEN": true,
	"SETNX": true, "MSETNX": true, "SETRANGE": true, "SETBIT": true, "GETBIT": true, "BITCOUNT": true,
	"EXISTS": true, "DEL": true, "UNLINK": true, "EXPIRE": true, "PEXPIRE": true, "EXPIREAT": true,
	"PEXPIREAT": true, "PERSIST": true, "TTL": true, "PTTL": true,
	"ZADD": true, "ZREM": true, "ZCARD": true, "ZCOUNT": true, "ZLEXCOUNT": true, "ZRANK": true,
	"ZREVRANK": true, "ZREMRANGEBYSCORE": true, "ZREMRANGEBYRANK": true, "ZREMRANGEBYLEX": true,
	"HSET": true, "HSETNX": true, "HDEL": true, "HINCRBY": true, "HEXISTS": true, "HLEN": true, "HSTRLEN": true,
	"SADD": true, "SREM": true, "SCARD": true, "SISMEMBER": true, "SMOVE": true,
	"LPUSH": true, "RPUSH": true, "LPUSHX": true, "RPUSHX": true, "LLEN": true, "LREM": true, "LINSERT": true,
	"PFADD": true, "PFCOUNT": true, "XLEN": true, "XDEL": true, "XACK": true, "XTRIM": true,
	"PUBLISH": true,
}

// bulkReplyCommands answer one bulk string (or nil), which Lua receives as
// a string (or false); the pop commands only when called without a count.
var bulkReplyCommands = map[string]bool{
	"GET": true, "GETSET": true, "GETDEL": true, "GETEX": true, "GETRANGE": true, "HGET": true,
	"LINDEX": true, "LPOP": true, "RPOP": true, "RPOPLPUSH": true, "LMOVE": true, "SPOP": true,
	"SRANDMEMBER": true, "ZSCORE": true, "ZINCRBY": true, "INCRBYFLOAT": true, "HINCRBYFLOAT": true,
}

// popCommands reply with an array when given a count.
var popCommands = map[string]bool{"LPOP": true, "RPOP": true, "SPOP": true, "SRANDMEMBER": true}

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
