// Package wire speaks RESP to one Redis server on one connection, with nothing between the
// caller and the socket: commands are appended to a buffer, written in one write, and their
// replies read back in order. It is the hammer's hot path on a single node, where go-redis's
// per-command machinery (a command object, hooks, the pool, its writer and reader) costs the
// client more CPU than the server spends running the script.
//
// A Conn is dialled with the same *redis.Options a go-redis client of the target has, and sets
// itself up as go-redis does (initConn): the options' dialer, or TCP (or a unix socket) with
// their TLS configuration; HELLO with the credentials and client name when the protocol is 3,
// falling back to AUTH and RESP2 when the server refuses HELLO; AUTH under RESP2 (an ACL
// user's, or the password alone, which a server older than 6 needs); SELECT of a database
// other than 0; CLIENT SETNAME.
// Each write is bounded by the options' WriteTimeout and each batch of replies by their
// ReadTimeout, to within 1% longer (a deadline is re-armed only when it would fall short), or
// by the context's deadline exactly, when sooner.
//
// Replies come back as go-redis's Cmd.Result gives them, so the code that reads them cannot
// tell the two apart: integers as int64, simple, bulk and verbatim strings as string, arrays,
// sets and pushes as []any (an element that is an error reply is that error, a nil element
// nil), maps as map[any]any, doubles as float64, booleans as bool, big numbers as *big.Int; a
// nil reply is redis.Nil and an error reply an error that satisfies redis.Error (so
// redis.HasErrorPrefix and internal/rediserr classify it as they classify go-redis's). Errors
// of the connection itself (a timeout, a reset, EOF) are returned as the net package gives
// them, and leave the Conn broken (so does a reply that cannot be read to its end, such as a
// map whose key is an error): every later call returns the same error, and the caller
// dials again. A Conn follows no MOVED or ASK (a single node's client does not) and retries
// nothing: a command whose reply was not read may or may not have run.
//
// One difference is deliberate: an array element that is an error reply is that element here
// whatever its code, where go-redis fails the whole reply (and leaves the rest of it unread)
// for the codes it gives types of their own (OOM, LOADING, MOVED, ...).
//
// A Conn is not safe for concurrent use.
package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/rediserr"
)

// ReplyError is an error reply of the server: its text as Redis sent it ("NOSCRIPT No
// matching script...", "WRONGPASS ...").
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// RedisError marks the error as Redis's own reply (redis.Error).
func (ReplyError) RedisError() {}

// ErrUnsupportedArg is the error of a command with an argument wire cannot write (as go-redis,
// wire writes strings, byte slices, integers, floats, booleans, nil, durations and times).
var ErrUnsupportedArg = errors.New("wire: argument of unsupported type")

// Conn is one connection to a Redis server.
type Conn struct {
	nc      net.Conn
	rd      *bufio.Reader
	buf     []byte // commands appended, not yet written
	pending int    // replies written and not yet read
	opt     *redis.Options
	broken  error
	resp3   bool
	ints    []int64 // an array of integers being read (ReadInts)
	// the deadlines armed on the socket (zero: none)
	wdl, rdl time.Time
}

// Dial connects to the server opt names and sets the connection up as go-redis would.
func Dial(ctx context.Context, opt *redis.Options) (*Conn, error) {
	nc, err := dial(ctx, opt)
	if err != nil {
		return nil, err
	}
	c := &Conn{nc: nc, rd: bufio.NewReaderSize(nc, 32<<10), buf: make([]byte, 0, 16<<10), opt: opt}
	if err := c.handshake(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func dial(ctx context.Context, opt *redis.Options) (net.Conn, error) {
	network := opt.Network
	if network == "" {
		network = "tcp"
	}
	if opt.DialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.DialTimeout)
		defer cancel()
	}
	if opt.Dialer != nil {
		return opt.Dialer(ctx, network, opt.Addr)
	}
	d := &net.Dialer{Timeout: opt.DialTimeout, KeepAlive: 5 * time.Minute}
	if opt.TLSConfig != nil {
		return (&tls.Dialer{NetDialer: d, Config: opt.TLSConfig}).DialContext(ctx, network, opt.Addr)
	}
	return d.DialContext(ctx, network, opt.Addr)
}

// handshake authenticates and selects as go-redis's initConn does.
func (c *Conn) handshake(ctx context.Context) error {
	user, pass := c.opt.Username, c.opt.Password
	if c.opt.CredentialsProvider != nil {
		user, pass = c.opt.CredentialsProvider()
	}
	if c.opt.CredentialsProviderContext != nil {
		var err error
		if user, pass, err = c.opt.CredentialsProviderContext(ctx); err != nil {
			return fmt.Errorf("failed to resolve credentials: %w", err)
		}
	}
	named := false
	if c.opt.Protocol != 2 {
		args := []any{"hello", 3}
		if pass != "" {
			helloUser := user // HELLO's AUTH takes a user name; AUTH below takes none without one
			if helloUser == "" {
				helloUser = "default"
			}
			args = append(args, "auth", helloUser, pass)
		}
		if c.opt.ClientName != "" {
			args = append(args, "setname", c.opt.ClientName)
		}
		_, err := c.Call(ctx, args...)
		switch {
		case err == nil:
			c.resp3, named, pass = true, true, ""
		case !rediserr.IsReply(err):
			return err
		}
		// Refused (an older server, a proxy): RESP2 and AUTH, as go-redis falls back.
	}
	// AUTH <password> without a user name: a server older than 6 knows no other form.
	if pass != "" {
		args := []any{"auth", pass}
		if user != "" {
			args = []any{"auth", user, pass}
		}
		if _, err := c.Call(ctx, args...); err != nil {
			return fmt.Errorf("failed to authenticate: %w", err)
		}
	}
	if c.opt.DB > 0 {
		if _, err := c.Call(ctx, "select", c.opt.DB); err != nil {
			return err
		}
	}
	if c.opt.ClientName != "" && !named {
		if _, err := c.Call(ctx, "client", "setname", c.opt.ClientName); err != nil {
			return err
		}
	}
	return nil
}

// RESP3 reports whether the connection speaks RESP3 (HELLO 3 was accepted).
func (c *Conn) RESP3() bool { return c.resp3 }

// Call sends one command and reads its reply.
func (c *Conn) Call(ctx context.Context, args ...any) (any, error) {
	if err := c.Append(args...); err != nil {
		return nil, err
	}
	if err := c.Flush(ctx); err != nil {
		return nil, err
	}
	return c.Read()
}

// Err is the error that broke the connection, or nil while it is usable.
func (c *Conn) Err() error { return c.broken }

// Close closes the connection.
func (c *Conn) Close() error {
	if c.broken == nil {
		c.broken = net.ErrClosed
	}
	return c.nc.Close()
}

// Append adds a command to the buffer, to be written by the next Flush. A command with an
// argument of a type wire cannot write is not added, and ErrUnsupportedArg says which.
func (c *Conn) Append(args ...any) error {
	start := len(c.buf)
	c.buf = appendHeader(c.buf, '*', len(args))
	for _, a := range args {
		var ok bool
		if c.buf, ok = appendArg(c.buf, a); !ok {
			c.buf = c.buf[:start]
			return fmt.Errorf("%w: %T", ErrUnsupportedArg, a)
		}
	}
	c.pending++
	return nil
}

// AppendScript adds a script's call as Append(name, first, len(keys), keys..., args...) would:
// EVALSHA and the SHA1, EVAL and the source, FCALL and the function, then the keys and the
// args, without boxing each key into an argument of its own.
func (c *Conn) AppendScript(name, first string, keys []string, args []any) error {
	start := len(c.buf)
	c.buf = appendHeader(c.buf, '*', 3+len(keys)+len(args))
	c.buf = appendBulk(appendBulk(c.buf, name), first)
	c.buf = appendInt(c.buf, int64(len(keys)))
	for _, k := range keys {
		c.buf = appendBulk(c.buf, k)
	}
	for _, a := range args {
		var ok bool
		if c.buf, ok = appendArg(c.buf, a); !ok {
			c.buf = c.buf[:start]
			return fmt.Errorf("%w: %T", ErrUnsupportedArg, a)
		}
	}
	c.pending++
	return nil
}

// Flush writes the buffered commands, then arms the read deadline for their replies.
func (c *Conn) Flush(ctx context.Context) error {
	if c.broken != nil {
		return c.broken
	}
	now := time.Now()
	if len(c.buf) > 0 {
		if err := arm(c.nc.SetWriteDeadline, &c.wdl, ctx, now, c.opt.WriteTimeout); err != nil {
			return c.fail(err)
		}
		_, err := c.nc.Write(c.buf)
		c.buf = c.buf[:0]
		if err != nil {
			return c.fail(err)
		}
	}
	if err := arm(c.nc.SetReadDeadline, &c.rdl, ctx, now, c.opt.ReadTimeout); err != nil {
		return c.fail(err)
	}
	return nil
}

// deadlineSlack is how much later than the timeout a deadline may fall: a deadline is armed
// again only once it would come sooner than now plus the timeout, and then a hundredth of the
// timeout later, so that a connection answering in microseconds re-arms it once every many
// rounds (arming is a runtime timer's reset, a tenth of a call's client CPU), while every
// reply is still waited for at least the timeout and at most 1% longer.
const deadlineSlack = 100

// arm sets the socket's deadline (set, last armed *cur) for an I/O starting at now: timeout
// later (go-redis's reading: 0 or -1 is none), or ctx's deadline exactly when that is sooner.
func arm(set func(time.Time) error, cur *time.Time, ctx context.Context, now time.Time, timeout time.Duration) error {
	var want time.Time
	if timeout > 0 {
		want = now.Add(timeout)
	}
	if d, ok := ctx.Deadline(); ok && (want.IsZero() || !d.After(want.Add(timeout/deadlineSlack))) {
		if d.Equal(*cur) {
			return nil
		}
		*cur = d
		return set(d)
	}
	switch {
	case want.IsZero() && cur.IsZero():
		return nil
	case want.IsZero():
		*cur = time.Time{}
	case !cur.IsZero() && !cur.Before(want) && !cur.After(want.Add(timeout/deadlineSlack)):
		return nil // armed within [want, want + 1%]
	default:
		*cur = want.Add(timeout / deadlineSlack)
	}
	return set(*cur)
}

func (c *Conn) fail(err error) error {
	if c.broken == nil {
		c.broken = err
		c.nc.Close()
	}
	return c.broken
}

// Read reads the next reply of the commands flushed.
func (c *Conn) Read() (any, error) {
	if c.broken != nil {
		return nil, c.broken
	}
	if c.pending == 0 {
		return nil, errors.New("wire: no reply is due")
	}
	for {
		v, push, err := c.reply()
		if _, isReply := err.(ReplyError); err != nil && err != redis.Nil && !isReply {
			return nil, c.fail(err)
		}
		if push { // out-of-band (RESP3 push): not a reply to any command
			continue
		}
		c.pending--
		return v, err
	}
}

// Receive reads the next message the server sends of its own accord, once a command answered
// has put the connection in a mode where it streams them (MONITOR's lines), as Read reads a
// reply, with the read deadline armed as Flush arms it (none when ReadTimeout is -1). Only the
// goroutine that receives may use the Conn meanwhile; another may only Abort it.
func (c *Conn) Receive(ctx context.Context) (any, error) {
	if c.broken != nil {
		return nil, c.broken
	}
	if err := arm(c.nc.SetReadDeadline, &c.rdl, ctx, time.Now(), c.opt.ReadTimeout); err != nil {
		return nil, c.fail(err)
	}
	v, _, err := c.reply()
	if _, isReply := err.(ReplyError); err != nil && err != redis.Nil && !isReply {
		return nil, c.fail(err)
	}
	return v, err
}

// Abort closes the connection under a goroutine blocked in Receive, which then returns the
// error; unlike Close it is safe to call from another goroutine.
func (c *Conn) Abort() { c.nc.Close() }

// ReadInts reads the next reply as Read does, except an array whose elements are all integers
// (every shipped script's reply), which is not built: ints says it was one, n is its length,
// and its first elements (as many as first holds) are written to first.
func (c *Conn) ReadInts(first []int64) (n int, ints bool, v any, err error) {
	if c.broken != nil {
		return 0, false, nil, c.broken
	}
	if c.pending == 0 {
		return 0, false, nil, errors.New("wire: no reply is due")
	}
	for {
		var push bool
		n, ints, v, push, err = c.replyInts(first)
		if _, isReply := err.(ReplyError); err != nil && err != redis.Nil && !isReply {
			return 0, false, nil, c.fail(err)
		}
		if push {
			continue
		}
		c.pending--
		return n, ints, v, err
	}
}

// replyInts reads one reply as reply does, an array of integers into first (ReadInts).
func (c *Conn) replyInts(first []int64) (n int, ints bool, v any, push bool, err error) {
	line, err := c.line()
	if err != nil {
		return 0, false, nil, false, err
	}
	if line[0] != '*' {
		v, push, err = c.replyOf(line)
		return 0, false, v, push, err
	}
	size, err := parseInt(line[1:])
	if err != nil || size < 0 {
		v, push, err = c.replyOf(line)
		return 0, false, v, push, err
	}
	c.ints = c.ints[:0]
	for i := range int(size) {
		elem, err := c.line()
		if err != nil {
			return 0, false, nil, false, err
		}
		if elem[0] == ':' {
			if x, err := parseInt(elem[1:]); err == nil {
				c.ints = append(c.ints, x)
				continue
			}
		}
		// Not an integer: the array as Read gives it, its integers so far boxed.
		arr := make([]any, size)
		for j, x := range c.ints {
			arr[j] = x
		}
		if err := c.element(arr, i, elem); err != nil {
			return 0, false, nil, false, err
		}
		for j := i + 1; j < len(arr); j++ {
			line, err := c.line()
			if err != nil {
				return 0, false, nil, false, err
			}
			if err := c.element(arr, j, line); err != nil {
				return 0, false, nil, false, err
			}
		}
		return 0, false, arr, false, nil
	}
	copy(first, c.ints)
	if cap(c.ints) > maxKeptInts {
		c.ints = nil // a long array once: its memory goes back
	}
	return int(size), true, nil, false, nil
}

// maxKeptInts bounds the integers a Conn keeps room for between replies (ReadInts).
const maxKeptInts = 1024

// reply reads one reply; push says it was a RESP3 push message.
func (c *Conn) reply() (v any, push bool, err error) {
	line, err := c.line()
	if err != nil {
		return nil, false, err
	}
	return c.replyOf(line)
}

// replyOf reads the reply whose first line is line.
func (c *Conn) replyOf(line []byte) (v any, push bool, err error) {
	// line is the reader's buffer: valid only until the next read, which a bulk string or an
	// aggregate's elements make, so its type is taken now.
	kind := line[0]
	switch kind {
	case '+':
		return string(line[1:]), false, nil
	case '-':
		return nil, false, ReplyError(line[1:])
	case ':':
		n, err := parseInt(line[1:])
		return n, false, err
	case '$', '!', '=':
		n, err := parseInt(line[1:])
		if err != nil {
			return nil, false, err
		}
		if n < 0 {
			return nil, false, redis.Nil
		}
		s, err := c.bulk(int(n))
		if err != nil {
			return nil, false, err
		}
		switch kind {
		case '!':
			return nil, false, ReplyError(s)
		case '=':
			if len(s) < 4 || s[3] != ':' {
				return nil, false, fmt.Errorf("redis: can't parse verbatim string reply: %q", s)
			}
			return s[4:], false, nil
		}
		return s, false, nil
	case '*', '~', '>':
		n, err := parseInt(line[1:])
		if err != nil {
			return nil, false, err
		}
		if n < 0 {
			return nil, false, redis.Nil
		}
		arr, err := c.elements(int(n))
		return arr, kind == '>' && c.resp3, err
	case '%', '|':
		n, err := parseInt(line[1:])
		if err != nil {
			return nil, false, err
		}
		m, err := c.pairs(int(n))
		if kind == '|' { // attributes: about the reply that follows, which is the reply
			if err != nil {
				return nil, false, err
			}
			return c.reply()
		}
		return m, false, err
	case '_':
		return nil, false, redis.Nil
	case ',':
		switch f := string(line[1:]); f {
		case "inf":
			return math.Inf(1), false, nil
		case "-inf":
			return math.Inf(-1), false, nil
		case "nan", "-nan":
			return math.NaN(), false, nil
		default:
			v, err := strconv.ParseFloat(f, 64)
			return v, false, err
		}
	case '#':
		switch string(line[1:]) {
		case "t":
			return true, false, nil
		case "f":
			return false, false, nil
		}
	case '(':
		if n, ok := new(big.Int).SetString(string(line[1:]), 10); ok {
			return n, false, nil
		}
	}
	return nil, false, fmt.Errorf("redis: can't parse %.100q", line)
}

// elements reads n replies as an array's: an element's error reply is the element, a nil one nil.
func (c *Conn) elements(n int) ([]any, error) {
	arr := make([]any, n)
	for i := range arr {
		line, err := c.line()
		if err != nil {
			return nil, err
		}
		if err := c.element(arr, i, line); err != nil {
			return nil, err
		}
	}
	return arr, nil
}

// element reads the array element whose first line is line into arr[i].
func (c *Conn) element(arr []any, i int, line []byte) error {
	v, _, err := c.replyOf(line)
	reply, isReply := err.(ReplyError) // wire's own: never wrapped (errors.As would allocate)
	switch {
	case err == redis.Nil:
	case isReply:
		arr[i] = reply
	case err != nil:
		return err
	default:
		arr[i] = v
	}
	return nil
}

// pairs reads n key-value pairs as a map's.
func (c *Conn) pairs(n int) (map[any]any, error) {
	m := make(map[any]any, n)
	for range n {
		k, _, err := c.reply()
		if _, isReply := err.(ReplyError); isReply || err == redis.Nil {
			// A key that is an error or nil: the rest of the map cannot be read as a reply, so it
			// is an error of the stream, which breaks the connection (not a reply of the call).
			return nil, fmt.Errorf("redis: RESP3 map key is %v", err)
		}
		if err != nil {
			return nil, err
		}
		switch k.(type) {
		case []any, map[any]any:
			return nil, fmt.Errorf("redis: RESP3 map key must be a scalar type, got %T", k)
		}
		v, _, err := c.reply()
		reply, isReply := err.(ReplyError)
		switch {
		case err == redis.Nil:
			m[k] = nil
		case isReply:
			m[k] = reply
		case err != nil:
			return nil, err
		default:
			m[k] = v
		}
	}
	return m, nil
}

// line reads one line of the reply without its CRLF; it is valid until the next read.
func (c *Conn) line() ([]byte, error) {
	b, err := c.rd.ReadSlice('\n')
	if err == bufio.ErrBufferFull { // a line longer than the buffer: a long simple string
		full := append([]byte(nil), b...)
		var rest []byte
		if rest, err = c.rd.ReadBytes('\n'); err == nil {
			b = append(full, rest...)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(b) < 3 || b[len(b)-2] != '\r' {
		return nil, fmt.Errorf("redis: invalid reply: %q", b)
	}
	return b[:len(b)-2], nil
}

// bulk reads a bulk string's n bytes and its CRLF.
func (c *Conn) bulk(n int) (string, error) {
	if n+2 <= c.rd.Size() {
		b, err := c.rd.Peek(n + 2)
		if err != nil {
			return "", err
		}
		s := string(b[:n])
		_, err = c.rd.Discard(n + 2)
		return s, err
	}
	b := make([]byte, n+2)
	if _, err := readFull(c.rd, b); err != nil {
		return "", err
	}
	return string(b[:n]), nil
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// parseInt reads a reply's decimal integer.
func parseInt(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 18 {
		return strconv.ParseInt(string(b), 10, 64)
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("redis: invalid integer %q", b)
		}
		n = n*10 + int64(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

func appendHeader(b []byte, kind byte, n int) []byte {
	b = append(b, kind)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, s string) []byte {
	b = appendHeader(b, '$', len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// appendInt writes n as a bulk string without an intermediate string.
func appendInt(b []byte, n int64) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], n, 10)
	b = appendHeader(b, '$', len(d))
	b = append(b, d...)
	return append(b, '\r', '\n')
}

// appendArg writes one argument as go-redis's writer does; ok is false for a type it refuses.
func appendArg(b []byte, v any) (_ []byte, ok bool) {
	switch v := v.(type) {
	case string:
		return appendBulk(b, v), true
	case []byte:
		b = appendHeader(b, '$', len(v))
		b = append(b, v...)
		return append(b, '\r', '\n'), true
	case int:
		return appendInt(b, int64(v)), true
	case int8:
		return appendInt(b, int64(v)), true
	case int16:
		return appendInt(b, int64(v)), true
	case int32:
		return appendInt(b, int64(v)), true
	case int64:
		return appendInt(b, v), true
	case uint:
		return appendBulk(b, strconv.FormatUint(uint64(v), 10)), true
	case uint8:
		return appendInt(b, int64(v)), true
	case uint16:
		return appendInt(b, int64(v)), true
	case uint32:
		return appendInt(b, int64(v)), true
	case uint64:
		return appendBulk(b, strconv.FormatUint(v, 10)), true
	case float32: // as go-redis writes it: widened first
		return appendBulk(b, strconv.FormatFloat(float64(v), 'f', -1, 64)), true
	case float64:
		return appendBulk(b, strconv.FormatFloat(v, 'f', -1, 64)), true
	case bool:
		if v {
			return appendBulk(b, "1"), true
		}
		return appendBulk(b, "0"), true
	case nil:
		return appendBulk(b, ""), true
	case time.Duration:
		return appendInt(b, v.Nanoseconds()), true
	case time.Time:
		return appendBulk(b, v.Format(time.RFC3339Nano)), true
	case encoding.BinaryMarshaler:
		data, err := v.MarshalBinary()
		if err != nil {
			return b, false
		}
		return appendArg(b, data)
	}
	return b, false
}
