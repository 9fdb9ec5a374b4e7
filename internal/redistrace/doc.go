// Package redistrace records what an application sends to its Redis while hammer --http drives
// it (--http-redis-trace): the commands that touch the run's client identities, in the order
// Redis ran them, read by MONITOR on each node (monitor.go) or seen by a RESP proxy the
// application connects through (proxy.go), with their replies where they can be known. From
// them it tells, per HTTP target, how its limiter decides (classify.go: atomic, check-then-act
// or unknown), counts its commands per admit and per refusal (summary.go), and lists the
// commands behind a first overshoot with the race among them (race.go).
//
// Nothing of other clients is kept: a command is kept only when a key it touches holds one of
// the run's identities (identity.go), fresh for every run.
package redistrace
