package httptarget

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"syscall"
)

// ErrorKind says what went wrong with a call that is neither an admit nor a refusal. Such a
// call is counted as a Redis strategy's errors are, and never judged as a decision.
type ErrorKind string

// The kinds of a call's error.
const (
	ErrStatus     ErrorKind = "status"     // answered, by neither --http-admitted nor --http-refused
	ErrAmbiguous  ErrorKind = "ambiguous"  // answered, and both held
	ErrExpression ErrorKind = "expression" // a decision expression failed on the response
	ErrTimeout    ErrorKind = "timeout"    // no response in time
	ErrReset      ErrorKind = "reset"      // the connection was reset or closed before the response
	ErrRefused    ErrorKind = "refused"    // nothing accepted the connection
	ErrCanceled   ErrorKind = "canceled"   // the caller's context ended the call
	ErrTransport  ErrorKind = "transport"  // any other failure to send or receive
)

// CallError is a call that decided nothing: its kind, the status when there was a response,
// and the cause.
type CallError struct {
	Kind   ErrorKind
	Status int // 0 when nothing was answered
	Err    error
}

func (e *CallError) Error() string {
	switch {
	case e.Kind == ErrStatus:
		return "status " + strconv.Itoa(e.Status) + " is neither admitted nor refused"
	case e.Err != nil:
		return string(e.Kind) + ": " + e.Err.Error()
	}
	return string(e.Kind)
}

func (e *CallError) Unwrap() error { return e.Err }

// transportError classifies a failure to get a response, by type and errno, never by message.
func transportError(err error) *CallError {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return &CallError{Kind: ErrCanceled, Err: err}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &CallError{Kind: ErrTimeout, Err: err}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &CallError{Kind: ErrRefused, Err: err}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &CallError{Kind: ErrReset, Err: err}
	}
	return &CallError{Kind: ErrTransport, Err: err}
}
