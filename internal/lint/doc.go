// Package lint checks Redis Lua scripts before they reach a server: the
// engine behind `limitctl lint`.
//
// Lint parses a script with gopher-lua's parser and walks it once. It never
// prints, reads flags or exits; the command formats the []Diagnostic it
// returns (String for text, the JSON tags for -o json) and fails when
// HasErrors says so (with strict, warnings fail too).
//
// # Rules
//
// Errors, which Redis or Redis Cluster will not accept:
//
//   - syntax: the file does not parse. The position is the parser's; an
//     unexpected end of file points just past the last non-blank character.
//     Nothing else is checked in a file that does not parse.
//   - global-write: `x = ...` where x is not a local in scope, and
//     `function foo() end`. Redis refuses scripts that create globals.
//     Fields of tables (`t.x = 1`, `function t.f() end`) are not globals.
//   - undeclared-key: a key argument of redis.call/redis.pcall that clearly
//     does not come from KEYS: ARGV, a concatenation (even KEYS[1] .. ':x'
//     names another key), a loop variable or a string literal. Redis Cluster
//     routes a script by its KEYS only.
//   - keys-command: redis.call('KEYS', ...), which walks the whole keyspace
//     while the server serves no one else.
//
// Warnings, which work but hurt:
//
//   - nondeterministic: TIME, RANDOMKEY, SRANDMEMBER, SPOP or math.random.
//     Effects replication (the default since Redis 5) replicates such
//     scripts safely, but clients cannot share one clock or reason about a
//     choice made on the server, and tests cannot inject either: pass time
//     and randomness in ARGV. TIME used only for logging is still reported.
//   - missing-expire: a key written (SET without EX/PX/EXAT/PXAT/KEEPTTL,
//     INCR*, DECR*, APPEND, ZADD, ZINCRBY, HSET*, HMSET, HINCRBY*, SADD,
//     LPUSH, RPUSH, XADD, MSET...) that no EXPIRE, PEXPIRE, EXPIREAT,
//     PEXPIREAT, SETEX, PSETEX or SET ... EX/PX anywhere in the script gives
//     a TTL. Reported once per key, at its first write.
//   - unbounded-loop: `while true` or `repeat ... until false` (any constant
//     condition that never ends the loop) whose body calls redis.call, and a
//     for loop over a reply that grows with the data (ZRANGE/LRANGE 0 -1,
//     ZRANGEBYSCORE without LIMIT, SMEMBERS, HGETALL, HKEYS, HVALS, KEYS), or
//     up to its length or a count such as ZCARD, whose body calls redis.call.
//   - argv-number: ARGV[i], or a local assigned from it without tonumber,
//     as an operand of + - * / % ^, unary minus, or < <= > >=.
//
// # What the linter follows, and what it does not guess
//
// A small data flow tracks what each local holds: the value of its most
// recent assignment in source order (branches and loop bodies are walked
// once, in order). KEYS[i], a local assigned from it, a local assigned from
// that local, t[i] for `local t = KEYS`, the values of ipairs(KEYS), and
// the entries of a table constructor holding only such keys are all
// declared keys; tonumber(...), number literals, arithmetic and
// `tonumber(x) or default` are numbers.
//
// Where the linter cannot know, it stays silent rather than guess: commands
// it has no key table for (see commands.go) or whose name is not a string
// literal; key arguments that are function parameters or call results; SET
// options that are not literals (one might be EX); and, for missing-expire,
// any script that gives a TTL to a key it cannot name, since that could be
// any key. Keys are matched by their resolved text, so KEYS[1] and a local
// alias of it are one key.
//
// # Positions
//
// Lines are 1-based and counted like the parser counts them ("\n", "\r",
// "\r\n" and "\n\r" each end a line). Columns are 1-based byte offsets, a tab
// counting as one. gopher-lua's AST keeps only lines, so each name and
// string literal is paired, in source order, with its token from the
// scanner; a diagnostic's column is that of the first name or string of the
// expression it is about (`redis` of redis.call, `KEYS` of KEYS[1] .. ':x',
// the key's string literal), or of the keyword of a loop. When the pairing
// cannot place a token on its node's line, the column falls back to the
// first non-blank character of that line.
//
// # Suppression
//
// A comment line
//
//	-- limitctl:ignore rule-name[, rule-name...] [-- reason]
//
// silences those rules (comma or space separated) on the next line only. A
// comment after code on the same line is not a directive, and unknown rule
// names silence nothing.
package lint
