// Package hammer is one hammer session: it picks the target (the user's server or a throw-away
// one), builds the limiters, checks before any load that the run can do all it must (scripts
// loaded, ACL permissions, clean-up allowed), drives the engine of internal/bench with fault
// injection alongside, deletes the run's keys and judges the assertions. It never prints: lines
// for the user go to Deps.Notice, the outcome is a Result.
package hammer
