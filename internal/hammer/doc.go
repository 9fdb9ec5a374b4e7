// Package hammer is the hammer's room: one session from the command line's values to the
// printed result.
//
//   - Flags.Resolve checks the command line's values into a run's Options.
//   - Run picks the target (the user's server or a throw-away one), builds the limiters, checks
//     before any load that the run can do all it must (scripts loaded, ACL permissions, clean-up
//     allowed), drives the engine of internal/bench with fault injection alongside, deletes the
//     run's keys and judges it.
//   - runkeys.Scheme (internal/hammer/runkeys) builds, and recognises, every key a run writes:
//     the clean-up deletes only those.
//   - Judge is the one verdict, for a run and for the merged run of hammer report (Report).
//   - Result is what both print: its JSON, its Table, its lines for a person.
//
// It never prints: lines for the user go to Deps.Notice, the outcome is a Result.
package hammer
