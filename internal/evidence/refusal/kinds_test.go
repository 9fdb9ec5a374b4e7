package refusal

// The tests here name the kinds whose rules live in this package as testKind and give a Spec
// their rule as the kind's model does (internal/evidence/kind/<name>), which this package's own
// tests cannot import.
type testKind string

const (
	concurrencyKind testKind = "concurrency"
	fixedKind       testKind = "fixed-window"
	slidingKind     testKind = "sliding-window"
	bucketKind      testKind = "token-bucket"
)

var testKinds = []testKind{concurrencyKind, fixedKind, slidingKind, bucketKind}

// ruleModel gives a kind's rule as its model does.
type ruleModel testKind

func (m ruleModel) Rule(s Spec) (Rule, bool) {
	switch testKind(m) {
	case concurrencyKind:
		return NewHeldRule(s), false
	case bucketKind:
		return NewBucketRule(s), !s.Server
	}
	return NewWindowRule(s, testKind(m) == fixedKind), !s.Server
}

func (m ruleModel) Counted() string {
	if testKind(m) == concurrencyKind {
		return "held"
	}
	return "admitted in its window"
}

// spec is a Spec of kind k.
func (k testKind) spec(s Spec) Spec {
	s.Kind, s.Model = string(k), ruleModel(k)
	return s
}
