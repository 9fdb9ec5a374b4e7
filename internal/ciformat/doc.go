// Package ciformat writes results in the formats CI systems already read: SARIF 2.1.0 for code
// scanning and GitHub Actions workflow commands for inline annotations (lint), JUnit XML for the
// test reports of Jenkins, GitLab, CircleCI and Buildkite (lint and hammer), and the Markdown a
// GitHub Actions step appends to $GITHUB_STEP_SUMMARY (hammer).
//
// Each writer takes a command's own result (lint's diagnostics, hammer's Result) and returns
// bytes, which Files writes where the command names (the --junit file, the step summary); it
// never prints, reads flags or decides an exit code. The verdicts, assertions and
// failures come from the run's hammer.Judgement, so a CI report never disagrees with the lines
// the command prints.
package ciformat
