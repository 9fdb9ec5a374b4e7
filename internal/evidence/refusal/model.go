package refusal

// Model is a limiter kind's refusal evidence, declared in the kind's own folder
// (internal/evidence/kind/<name>).
type Model interface {
	// Rule is one key's refusal rule under s; byStamp: its refusals are grouped by the
	// millisecond of their stamp, else of their sending.
	Rule(s Spec) (rule Rule, byStamp bool)
	// Counted says what a false reject counted against the refusal, for its how-line: "held",
	// "admitted in its window".
	Counted() string
}
