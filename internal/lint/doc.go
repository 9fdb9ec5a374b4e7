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
//     gopher-lua's parser also takes what Lua 5.1, which Redis runs,
//     refuses: goto and ::labels::, empty statements (;;), a call whose (
//     starts a line after a name, ) or ] (ambiguous syntax) and a number run
//     into a word (0then, a malformed number). They are syntax errors too
//     (source/lua51.go).
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
//   - shebang: a Redis 7 first line Redis refuses: `#!` with an engine other
//     than lua, an EVAL flag other than no-writes, allow-oom, allow-stale,
//     no-cluster and allow-cross-slot-keys, an option other than flags= in
//     an EVAL script, or anything but name= in a Function library's.
//   - readonly-write: a write command (what redis-server's COMMAND marks
//     write, plus PUBLISH, SPUBLISH and PFCOUNT, which it refuses there too)
//     in a script flagged no-writes, or in a library function registered
//     with flags={'no-writes'}, directly or through a local helper.
//   - library: a Function library that reads the KEYS or ARGV globals (they
//     do not exist there), calls redis.call at its top level (FUNCTION LOAD
//     runs that code, without redis.call), reads at its top level anything
//     FUNCTION LOAD does not offer there (only redis.register_function,
//     redis.log, redis.LOG_* and redis.REDIS_VERSION exist: `local rcall =
//     redis.call`, `local floor = math.floor` and pairs(...) fail the load),
//     or registers no function; and
//     redis.register_function in a file without `#!lua name=...`.
//   - reply-type: a number (an integer reply such as INCRBY's or ZCARD's,
//     tonumber(...), arithmetic, a number literal) compared with a string
//     (ARGV, a bulk reply such as GET's or ZSCORE's, a string literal, a
//     concatenation). Lua never converts in a comparison: == is always
//     false, ~= always true, and < <= > >= raise an error. Replies of
//     redis.pcall, and every reply after redis.setresp, are not typed.
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
//     PEXPIREAT, SETEX, PSETEX, SET ... EX/PX or GETEX ... EX/PX anywhere
//     in the script gives a TTL. Reported once per key, at its first write.
//   - unbounded-loop: `while true` or `repeat ... until false` (any constant
//     condition that never ends the loop) whose body calls redis.call, and a
//     for loop over a reply that grows with the data (ZRANGE/LRANGE 0 -1,
//     ZRANGEBYSCORE without LIMIT, SMEMBERS, HGETALL, HKEYS, HVALS, KEYS), or
//     up to its length or a count such as ZCARD, whose body calls redis.call.
//   - argv-number: ARGV[i], or a local assigned from it without tonumber,
//     as an operand of + - * / % ^, unary minus, or < <= > >= against a
//     value that is not certainly a number (that is reply-type).
//   - reply-key: a key argument read from a reply (SCAN, KEYS, SMEMBERS,
//     ZRANGE, HGET, GET...: the reply, an element of it, a loop variable over
//     it, unpack of it). A warning, not an error: Redis accepts an undeclared
//     key on a single node, and on a Cluster node when it hashes to the
//     script's slot, which hash-tagged names ({queue}:job:42) guarantee and
//     the linter cannot see; the work still grows with the data.
//
// unbounded-loop also covers while and repeat loops whose condition depends
// on a reply or the size of one (`until cursor == "0"` after a SCAN, `while
// i <= #items` over LRANGE 0 -1), unless a counter that does not depend on
// the data can end the loop on its own (`until not job or n >= max`); a flag
// (`until found or cursor == "0"`) is no such bound.
//
// # Redis 7 scripts and Function libraries
//
// A first line starting with #! is read as Redis reads it and blanked before
// parsing (Redis skips it but keeps its line feed), so line numbers stay the
// user's. With name=... the file is a Function library: every function it
// registers at its top level, inline, as a local function defined above or
// as a field of a local table (function M.take(keys, args) ... end), in
// either form (redis.register_function('f', fn) or the table form with
// function_name, callback and flags), is checked as a unit of its own, its
// first two parameters standing for KEYS and ARGV; missing-expire and
// readonly-write judge each unit apart. Valkey's server.call, server.pcall
// and server.register_function are the redis ones.
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
// A local assigned inside a branch or loop body may hold either value
// afterwards: its origin and type are kept only when both agree, so no
// error rests on one path; what it depends on (a reply, a growing size) is
// the assigned value's. A local function's parameters are followed through
// its calls: a TTL it gives to, or a write it makes on, a parameter happens
// to each call's argument, and a write command it runs is one its caller
// runs.
//
// Where the linter cannot know, it stays silent rather than guess: commands
// it has no key table for (see commands.go) or whose name is not a string
// literal; key arguments that are function parameters or call results; SET
// options that are not literals (one might be EX). missing-expire is decided
// per key: a TTL on KEYS[i] could be any declared key, so it covers them all
// (and nothing else), while one on an element of a list of named keys (the
// loop variable of ipairs({KEYS[2], KEYS[3]})) covers just those; a TTL on a key read from a reply names a key the
// script found in the data, so it covers none of the keys the script names;
// only a TTL on a key the linter cannot name at all (a call result, a
// parameter of a function never called) silences the rule for the whole
// script or function. Keys are matched by their resolved text, so KEYS[1]
// and a local alias of it are one key.
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
// names silence nothing. A syntax error cannot be silenced: nothing else in
// the file was checked.
//
// # Project configuration
//
// LintWith takes a Config: the rules it disables report nothing. FindConfig
// reads .limitctl.yaml (`lint: {disable: [missing-expire]}`) from a
// directory or its parents up to the repository root; Config.With adds
// --disable and --enable on top. syntax cannot be disabled.
//
// # Before sending a script to Redis
//
// Gate turns diagnostics into what a tool about to load the script should
// do (hammer --script): a syntax error becomes a warning, since gopher-lua's
// parser may reject what Redis' Lua accepts and SCRIPT LOAD is the judge;
// every other error blocks.
package lint
