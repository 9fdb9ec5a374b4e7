package httptarget

import (
	"context"
	"errors"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/trace"
)

// Limiter is the target as the engine drives every strategy: a limiter.Limiter. Acquire reads
// its call's {worker} and {seq} from the recorder the engine puts in each worker's context
// (trace.From: the worker and its count of decisions), records the request as the decision's
// one step (its method, the status as the reply, its sent and answered instants), and returns
// the instants the endpoint decided between (Decision.Sent, Replied) with the status. The
// time it is given is not read: the endpoint decides on its own clock. Release does nothing:
// the endpoint releases its own slots before it answers.
func (t *Target) Limiter() limiter.Limiter { return endpoint{t, trace.HTTPOp(t.method)} }

type endpoint struct {
	t  *Target
	op trace.Op
}

func (e endpoint) Acquire(ctx context.Context, key string, _ time.Time) (limiter.Decision, error) {
	rec := trace.From(ctx)
	var call Call
	if rec != nil {
		call = Call{Worker: rec.Worker(), Seq: rec.Seq()}
	}
	step := rec.StepOp(e.op, trace.HTTPRequest)
	d, err := e.t.Acquire(ctx, key, call)
	out := limiter.Decision{Allowed: d.Allowed, Status: d.Status, Sent: d.Sent, Replied: d.Received, Retried: d.Retried}
	var ce *CallError
	if errors.As(err, &ce) {
		out.Status = ce.Status
	}
	if step != nil {
		step.SentUs, step.RepliedUs = rec.At(d.Sent), rec.At(d.Received)
		switch {
		case out.Status != 0:
			step.Reply.SetInt(int64(out.Status))
		case err != nil:
			step.Reply.SetText(trace.Error, err.Error())
		}
		if d.Received.IsZero() {
			step.RepliedUs = rec.Since()
		}
	}
	return out, err
}

func (endpoint) Release(context.Context, string, limiter.Decision) error { return nil }

// ErrorKind names the error's kind for the counts of errors by kind.
func (e *CallError) ErrorKind() string { return string(e.Kind) }
