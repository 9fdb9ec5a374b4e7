// Package fold is the one fold from a strategy's decisions to what its evidence found: each
// limiter key's overshoot evidence and refusal judge, added up into Findings (the peak and the
// overshoot, the power, the windows proven, the false rejects), and the first overshoot told as
// the requests behind it (Explain). The engine, judge and a shared run's timeline all judge a
// strategy through it, so what one adds up the others add up too.
package fold
