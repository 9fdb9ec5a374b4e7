package httptarget

import (
	"fmt"

	"github.com/limitctl/limitctl/internal/contract"
)

// judge reads a response as an admit, a refusal or neither.
type judge struct {
	admitted, refused *contract.Response
	// byStatus: both expressions read the status alone, so each code's outcome is computed
	// once, at New, for every code a server may send (100-599).
	byStatus bool
	outcomes [600]outcome
}

type outcome uint8

const (
	outNeither outcome = iota
	outAdmit
	outRefuse
	outBoth
	outFailed // an expression failed on this code: evaluated again to say why
)

// newJudge compiles the decision expressions ("" the defaults). Decisions that both hold for
// a status are refused here when the expressions read the status alone.
func newJudge(admitted, refused string) (judge, error) {
	if admitted == "" {
		admitted = contract.DefaultHTTPAdmitted
	}
	if refused == "" {
		refused = contract.DefaultHTTPRefused
	}
	var j judge
	var err error
	if j.admitted, err = contract.CompileResponse("--http-admitted", admitted); err != nil {
		return j, err
	}
	if j.refused, err = contract.CompileResponse("--http-refused", refused); err != nil {
		return j, err
	}
	j.byStatus = j.admitted.ByStatus() && j.refused.ByStatus()
	if !j.byStatus {
		return j, nil
	}
	for status := 100; status < len(j.outcomes); status++ {
		o := j.evaluate(status, nil)
		if o == outBoth {
			return j, fmt.Errorf("--http-admitted %q and --http-refused %q both hold for status %d; a response is one or the other",
				admitted, refused, status)
		}
		j.outcomes[status] = o
	}
	return j, nil
}

func (j *judge) evaluate(status int, lookup func(string) (string, bool)) outcome {
	a, errA := j.admitted.Eval(status, lookup)
	r, errR := j.refused.Eval(status, lookup)
	switch {
	case errA != nil || errR != nil:
		return outFailed
	case a && r:
		return outBoth
	case a:
		return outAdmit
	case r:
		return outRefuse
	}
	return outNeither
}

// decide reads one response: allowed, or refused (false, nil), or a *CallError.
func (j *judge) decide(status int, lookup func(string) (string, bool)) (bool, error) {
	o := outFailed
	if j.byStatus && status >= 100 && status < len(j.outcomes) {
		o = j.outcomes[status]
	}
	if o == outFailed {
		o = j.evaluate(status, lookup)
	}
	switch o {
	case outAdmit:
		return true, nil
	case outRefuse:
		return false, nil
	case outBoth:
		return false, &CallError{Kind: ErrAmbiguous, Status: status, Err: fmt.Errorf("--http-admitted and --http-refused both hold for status %d", status)}
	case outFailed:
		_, err := j.admitted.Eval(status, lookup)
		if err == nil {
			_, err = j.refused.Eval(status, lookup)
		}
		return false, &CallError{Kind: ErrExpression, Status: status, Err: err}
	}
	return false, &CallError{Kind: ErrStatus, Status: status}
}
