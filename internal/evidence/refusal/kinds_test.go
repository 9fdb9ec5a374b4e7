package refusal_test

import (
	bucketkind "github.com/limitctl/limitctl/internal/evidence/kind/bucket"
	fixedkind "github.com/limitctl/limitctl/internal/evidence/kind/fixed"
	heldkind "github.com/limitctl/limitctl/internal/evidence/kind/held"
	slidingkind "github.com/limitctl/limitctl/internal/evidence/kind/sliding"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// The tests here judge each kind by its model's rule (internal/evidence/kind/<name>), named by a
// testKind, as the engine builds a Spec.
type testKind string

const (
	concurrencyKind testKind = "concurrency"
	fixedKind       testKind = "fixed-window"
	slidingKind     testKind = "sliding-window"
	bucketKind      testKind = "token-bucket"
)

var testKinds = []testKind{concurrencyKind, fixedKind, slidingKind, bucketKind}

// model is the kind's refusal evidence.
func (k testKind) model() refusal.Model {
	return map[testKind]refusal.Model{concurrencyKind: heldkind.Model, fixedKind: fixedkind.Model, slidingKind: slidingkind.Model, bucketKind: bucketkind.Model}[k]
}

// spec is a Spec of kind k.
func (k testKind) spec(s refusal.Spec) refusal.Spec {
	s.Kind, s.Model = string(k), k.model()
	return s
}
