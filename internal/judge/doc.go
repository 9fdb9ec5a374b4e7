// Package judge judges what a load tool already recorded (vegeta's results, k6's JSON lines, a
// hammer --record file) as the hammer judges its own calls: the records are read as bounds on
// each decision (internal/history), fed to the same evidence (internal/evidence/overshoot, and the
// refusal judges where the limiter's state before the run is known), and come out as the
// hammer's own Result, judged by hammer.Judge: one strategy per key group, with its verdict, its
// power and the records behind its first overshoot.
//
// A request recorded by an HTTP load tool was decided by the limiter somewhere between its
// start and its end, on a clock the records do not show: every kind is judged over those
// intervals, as hammer --http judges an endpoint, and the concurrency limiter by the hold the
// endpoint promises (--hold). A hammer --record file names how its run judged each strategy's
// calls (its evidence, clocks and allowances) and what each call told the evidence, so its run
// is judged again by the same rules, against its own limit or another one.
//
// A record whose start or end is unknown, or that comes out of time order beyond the reader's
// window, bounds nothing: it is counted as not judged, never guessed at.
package judge
